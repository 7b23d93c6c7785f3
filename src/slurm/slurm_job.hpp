#pragma once
// A Slurm job and node as ddpctl knows them, whatever command they were read
// from (slurm_parse_*.hpp read them, slurm.hpp asks Slurm): plain types and
// the words for them. Model layer (docs/architecture.md).
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddpctl {

struct SbatchResult {
  enum class Kind { Submitted, Rejected, Unconfirmed };
  Kind kind = Kind::Unconfirmed;
  std::string job_id;   // when Submitted
  std::string cluster;  // from `jobid;cluster`, if sbatch printed one
  std::string reason;   // why Rejected or Unconfirmed
};

// What `sbatch --test-only` says about a script: exit 0 and, on stderr,
// "Job N to start at TIME using P processors on nodes LIST in partition P";
// a job that can never run exits 1 with Slurm's reason ("Requested node
// configuration is not available"). A controller that did not answer is
// Unknown, never Impossible.
struct StartEstimate {
  enum class Kind { Starts, Impossible, Unknown };
  Kind kind = Kind::Unknown;
  long long start = 0;  // Unix seconds (Starts)
  std::string nodes, partition;
  int processors = 0;
  std::string reason;  // Impossible: Slurm's words; Unknown: what went wrong
};

// A job's state as Slurm names it (squeue's job_state, sacct's State without
// "by UID"); Unknown when Slurm could not say, or said something ddpctl does
// not know. Names appear only where text is read or written (state_name,
// parse_job_state).
enum class JobState {
  Unknown,
  Pending,
  Configuring,
  Running,
  Completing,
  Suspended,
  Stopped,
  Signaling,
  StageOut,
  Resizing,
  Requeued,
  RequeueHold,
  RequeueFed,
  ResvDelHold,
  SpecialExit,
  Completed,
  Failed,
  Cancelled,
  Timeout,
  NodeFail,
  Preempted,
  OutOfMemory,
  BootFail,
  Deadline,
  Revoked,
};
// "PENDING", "NODE_FAIL", ...; "UNKNOWN" for Unknown.
const char* state_name(JobState state);
// "RUNNING" -> Running, "CANCELLED by 0" -> Cancelled; nullopt for a name
// ddpctl does not know.
std::optional<JobState> parse_job_state(const std::string& name);
// The job has ended and will not run again unless requeued.
bool is_terminal(JobState state);

// A job id in one of the forms Slurm gives: "123", an array task "123_4", a
// heterogeneous job's component "123+1"; at most 32 bytes. What another
// host says is a job id is checked so before it is recorded or passed on.
bool is_slurm_job_id(std::string_view id);

// How a job's processes ended, as Slurm recorded it.
struct ExitStatus {
  std::optional<int> code;    // the exit code, when it exited
  std::optional<int> signal;  // the signal that ended it, when one did
  bool operator==(const ExitStatus& o) const { return code == o.code && signal == o.signal; }
};
// A raw wait status, as squeue --json of 22.05 and 23.02 gives it (768: exit
// code 3; 9: killed by signal 9).
ExitStatus exit_from_wait_status(long long status);
// sacct's ExitCode, "code:signal" ("3:0", "0:9").
ExitStatus exit_from_sacct(const std::string& text);
// "exit code 3", "killed by signal 9 (SIGKILL)"; empty for success or when
// nothing is known. The one formatter for every source.
std::string describe_exit(const ExitStatus& exit);

struct Job {
  // Slurm's own job id: for an array task its unique id (squeue's job_id,
  // sacct's JobIDRaw: what %j names in its log), for a collapsed record of
  // pending tasks the array's id.
  std::string id;
  // A job array's records (job_array.hpp): the array's id (what sbatch
  // printed), empty for a job that is no array's.
  std::string array_job_id;
  std::optional<int> array_task_id;  // the one task this record is
  // A collapsed record standing for pending tasks: their list as Slurm
  // printed it ("4-19%4"); empty for a single task.
  std::string array_tasks;
  std::optional<int> array_max_tasks;  // the %K throttle, where Slurm says it
  std::string name;
  std::string comment;
  // As Slurm's own state string names it: a flag such as COMPLETING,
  // CONFIGURING or REQUEUED wins over the base state (PENDING, RUNNING...).
  JobState state = JobState::Unknown;
  std::vector<std::string> flags;  // every state flag Slurm reported (REQUEUED, COMPLETING, ...)
  std::string reason;     // pending/failure reason code, e.g. Resources
  std::string partition;
  std::string account;
  std::string nodes;      // node list, e.g. "a[1-2]"
  std::string cwd;
  std::optional<long long> submit_time, start_time, end_time;  // Unix seconds; start may be an estimate
  std::optional<long long> time_limit_s;                       // none: unknown or unlimited
  int node_count = 0;
  int gpus = 0;
  // sacct's: the allocation's CPUs (AllocTRES), the memory asked (ReqTRES,
  // MiB; 0 unknown), the energy its nodes consumed (ConsumedEnergyRaw,
  // joules; none where the site does not gather it: 0 or empty).
  int cpus = 0;
  long long mem_mib = 0;
  std::optional<double> energy_j;
  // How many times Slurm requeued it: Slurm's "Restarts" (scontrol,
  // restart_cnt in --json), SLURM_RESTART_COUNT inside the job; the index
  // of its current attempt (0 first). "Restart" in ddpctl's code is the
  // in-job restart (in_job_restart.hpp); the ledger and status --json keep
  // the key "restarts".
  int requeues = 0;
  ExitStatus exit;
  std::string cancelled_by;  // sacct's "CANCELLED by UID": the uid
  std::string source;     // "squeue" or "sacct"
};

struct NodeInfo {
  std::string name;
  std::vector<std::string> partitions;
  std::vector<std::string> features;
  std::map<std::string, int> gpus_by_type;  // "" for untyped GPUs
  int cpus = 0;
  long long memory_mib = 0;
  std::string state;
  int total_gpus() const;
};

// The id of the submission a record belongs to, as sbatch printed it: an
// array's id for each of its tasks, else the job's own.
inline const std::string& submission_id(const Job& job) {
  return job.array_job_id.empty() ? job.id : job.array_job_id;
}

// A job's end once Slurm can no longer change it: squeue has forgotten the
// job (a job it still lists may be requeued, passing through FAILED,
// CANCELLED, NODE_FAIL or PREEMPTED on the way) and sacct says how it ended.
// The run's ledger keeps it (ledger.hpp) with what explaining the end asks
// of Slurm, so that Slurm is never asked about that job again.
struct JobEnd {
  Job job;                      // as sacct gave it: state, exit, times, who cancelled it
  std::vector<Job> earlier;     // a requeued job's earlier attempts (sacct --duplicates), earliest first
  std::vector<NodeInfo> nodes;  // NODE_FAIL: the job's nodes (name and state) when the end was read
  long long recorded_at = 0;    // Unix seconds
};

}  // namespace ddpctl
