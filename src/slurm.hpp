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

struct Job {
  std::string id;
  std::string name;
  std::string comment;
  JobState state = JobState::Unknown;
  std::string reason;     // pending/failure reason code, e.g. Resources
  std::string partition;
  std::string account;
  std::string nodes;      // node list, e.g. "a[1-2]"
  std::string cwd;
  long long submit_time = 0, start_time = 0, end_time = 0;  // Unix seconds, 0 unknown
  long long time_limit_s = 0;                               // 0 unknown or unlimited
  int node_count = 0;
  int gpus = 0;
  int restarts = 0;
  std::string exit_code;  // sacct's "0:0", or squeue's number
  std::string source;     // "squeue" or "sacct"
};

struct JobQuery {
  bool answered = false;  // false: Slurm could not be asked; `error` says why
  std::string error;
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
  std::vector<NodeInfo> nodes;
};

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
  // Every job squeue knows (squeue --json, else a format string). 22.05's
  // --json ignores -j, so callers filter.
  JobQuery queue();
  // Jobs from accounting (sacct), by id, or submitted since `since` (Unix s).
  JobQuery accounting(const std::vector<std::string>& ids, long long since = 0);
  CommandResult cancel(const std::vector<std::string>& ids);
  NodeQuery nodes();
  // Accounts the current user may charge; nullopt when accounting cannot say.
  std::optional<std::vector<std::string>> user_accounts();
  // `scontrol show config` as key/value pairs; empty if it failed.
  std::map<std::string, std::string> config();
  // "22.05.8", or empty with `error` set.
  std::string version(std::string* error = nullptr);
  CommandResult raw(const std::vector<std::string>& argv);

 private:
  CommandRunner& runner_;
  std::chrono::milliseconds query_timeout_;
  std::chrono::milliseconds submit_timeout_;
};

// Slurm's reason codes in plain words ("Resources" -> "waiting for free nodes").
std::string explain_reason(const std::string& reason);

}  // namespace ddpctl
