#pragma once
// SlurmClient: everything ddpctl asks Slurm, through one CommandRunner. Each
// query says whether Slurm answered; callers show "unknown", never "gone",
// when it did not.
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "slurm/slurm_job.hpp"
#include "base/process.hpp"

namespace ddpctl {


struct JobQuery {
  bool answered = false;  // false: Slurm could not be asked; `error` says why
  std::string error;
  std::string note;       // answered, but not as asked (--json unreadable: the format string was used)
  // The format string path has no exit codes: an ended job's comes from sacct.
  bool has_exit_codes = true;
  std::vector<Job> jobs;
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
  // knows are simply absent. An array's id stands for every record of that
  // array (its tasks, each with an id of its own, and the collapsed record
  // of its pending tasks), in the same one call, however many tasks it has.
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
  // Jobs from accounting (sacct), by id, or submitted since `since` (Unix s);
  // an array's id gives every record of that array, as jobs() does.
  JobQuery accounting(const std::vector<std::string>& ids, long long since = 0);
  // Every attempt accounting recorded of one job (sacct --duplicates), the
  // earliest first: a requeued job's earlier ends (REQUEUED, NODE_FAIL, ...).
  JobQuery attempts(const std::string& id);
  // The jobs that ran on `nodes` (a Slurm node list) between `from` and
  // `to` (Unix seconds), from accounting: who took a preempted job's nodes.
  JobQuery ran_on(const std::string& nodes, long long from, long long to);
  // The same for many jobs in one sacct call (sacct -X --duplicates
  // --jobs=...), or in a few where the ids would not fit one argument
  // (kJobListChars; Linux takes 128 KiB): each job's records in
  // accounting's order, its latest last.
  JobQuery attempts(const std::vector<std::string>& ids);
  static constexpr size_t kJobListChars = 100000;
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
  // squeue or sacct, with every array's task list in full.
  CommandResult query(const std::vector<std::string>& argv);
  JobQuery jobs_chunk(const std::vector<std::string>& ids);

  // An answer showed that squeue --json lists jobs not asked for (22.05), or
  // could not be read: jobs() reads the format string from then on.
  bool json_ignores_jobs_ = false;
  struct Kept {
    std::set<std::string> asked;
    JobQuery answer;
  };
  std::optional<Kept> snapshot_;

  CommandRunner& runner_;
  std::chrono::milliseconds query_timeout_;
  std::chrono::milliseconds submit_timeout_;
};

}  // namespace ddpctl
