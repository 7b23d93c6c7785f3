#pragma once
// SlurmClient: everything ddpctl asks Slurm, through one CommandRunner. Each
// query says whether Slurm answered; callers show "unknown", never "gone",
// when it did not.
#include <chrono>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "process.hpp"

namespace ddpctl {

struct SbatchResult {
  enum class Kind { Submitted, Rejected, Unconfirmed };
  Kind kind = Kind::Unconfirmed;
  std::string job_id;   // when Submitted
  std::string cluster;  // from `jobid;cluster`, if sbatch printed one
  std::string reason;   // why Rejected or Unconfirmed
};

// Judges sbatch --parsable by its exit status and stdout, never by stderr
// being empty: sbatch retries on EAGAIN and says so on stderr.
SbatchResult parse_sbatch_result(const CommandResult& r);

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
// Reads the answer of `env SLURM_TIME_FORMAT=%s sbatch --test-only ...`;
// the start time may also be ISO 8601 local time (YYYY-MM-DDTHH:MM:SS).
StartEstimate parse_test_only(const CommandResult& r);

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
  std::string id;
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
  int restarts = 0;
  ExitStatus exit;
  std::string cancelled_by;  // sacct's "CANCELLED by UID": the uid
  std::string source;     // "squeue" or "sacct"
};

struct JobQuery {
  bool answered = false;  // false: Slurm could not be asked; `error` says why
  std::string error;
  std::string note;       // answered, but not as asked (--json unreadable: the format string was used)
  // The format string path has no exit codes: an ended job's comes from sacct.
  bool has_exit_codes = true;
  std::vector<Job> jobs;
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

struct NodeQuery {
  bool answered = false;
  std::string error;
  std::string source;  // "Slurm 24.11.5 (data_parser v0.0.42)", from sinfo's meta
  std::string reader;  // the command the nodes were read from
  std::vector<NodeInfo> nodes;
};

// The user ddpctl runs as (Slurm's user names): the passwd entry of the uid,
// else $USER.
std::string current_user();

// Slurm answered, with an error (e.g. --json's "errors" when the controller is down).
struct SlurmAnswerError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class SlurmClient {
 public:
  explicit SlurmClient(CommandRunner& runner);

  // sbatch --parsable ARGS...; the last arg is the script.
  SbatchResult submit(const std::vector<std::string>& args);
  // sbatch --test-only ARGS...: when and where the job would start; submits nothing.
  StartEstimate estimate_start(const std::vector<std::string>& args);
  // Every job of the current user squeue knows, ended ones included (squeue
  // --json --states=all, else the format string when the JSON cannot be
  // read). 22.05's --json ignores filters, so callers pick their jobs.
  JobQuery queue();
  // Only the jobs asked for, ended ones included, so that the cost is that of
  // the user's runs, not of the cluster's queue: squeue --json --jobs=...
  // where the JSON honours the filter (23.02 and later), in chunks of
  // kJobsPerQuery. Where it does not (22.05 lists every job whatever it is
  // asked), that is seen in the first answer and later calls read the format
  // string with --jobs, which filters on every version. Ids squeue no longer
  // knows are simply absent.
  JobQuery jobs(const std::vector<std::string>& ids);
  static constexpr size_t kJobsPerQuery = 200;
  // An answer showed that squeue --json ignores --jobs (doctor says so).
  bool json_ignores_jobs() const { return json_ignores_jobs_; }

  // One refresh of a watch asks Slurm once: while a Snapshot lives, jobs()
  // answers ids that an earlier answer of the same refresh covered from that
  // answer (a race's winners, then every job of the same runs).
  class Snapshot {
   public:
    explicit Snapshot(SlurmClient& slurm) : slurm_(slurm) { slurm_.snapshot_ = Kept{}; }
    ~Snapshot() { slurm_.snapshot_.reset(); }
    Snapshot(const Snapshot&) = delete;
    Snapshot& operator=(const Snapshot&) = delete;

   private:
    SlurmClient& slurm_;
  };
  // Jobs from accounting (sacct), by id, or submitted since `since` (Unix s).
  JobQuery accounting(const std::vector<std::string>& ids, long long since = 0);
  // Every attempt accounting recorded of one job (sacct --duplicates), the
  // earliest first: a requeued job's earlier ends (REQUEUED, NODE_FAIL, ...).
  JobQuery attempts(const std::string& id);
  CommandResult cancel(const std::vector<std::string>& ids);
  // Every node with its partitions, GPUs, CPUs and features: from sinfo
  // --json (22.05) or scontrol show nodes --json (23.02 and later), as
  // sinfo's own meta says.
  NodeQuery nodes();
  // Accounts the current user may charge; nullopt when accounting cannot say.
  std::optional<std::vector<std::string>> user_accounts();
  // `scontrol show config` as key/value pairs; empty if it failed.
  std::map<std::string, std::string> config();
  // "22.05.8", or empty with `error` set.
  std::string version(std::string* error = nullptr);
  CommandResult raw(const std::vector<std::string>& argv);

 private:
  JobQuery sacct(const std::vector<std::string>& argv);  // parsed, or why not
  JobQuery jobs_chunk(const std::vector<std::string>& ids);

  // An answer showed that squeue --json lists jobs not asked for (22.05), or
  // could not be read: jobs() reads the format string from then on.
  bool json_ignores_jobs_ = false;
  struct Kept {
    std::vector<std::string> asked;
    JobQuery answer;
  };
  std::optional<Kept> snapshot_;

  CommandRunner& runner_;
  std::chrono::milliseconds query_timeout_;
  std::chrono::milliseconds submit_timeout_;
};

}  // namespace ddpctl
