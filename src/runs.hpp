#pragma once
// Run directories: runs/<name>-<utc>-<token>/ with the spec as given, the
// resolved shapes (run.json), the rendered scripts, and the ledger
// (ledger.json) of every sbatch attempt. The ledger is rewritten atomically
// before sbatch runs (intent) and after (outcome), so a crash at any point
// leaves a record that `submit` can settle by looking the token up in Slurm.
#include <optional>
#include <string>
#include <vector>

#include "resolve.hpp"

namespace ddpctl {

struct Attempt {
  std::string token;   // unique; the job's --comment is "ddpctl:<token>"
  std::string shape;   // shape label
  std::string script;  // file name inside the run directory
  std::vector<std::string> argv;
  std::string intent_at;  // UTC, ISO 8601
  // "intent": sbatch may be running or ddpctl died before recording an outcome;
  // "submitted", "rejected", "unconfirmed" (sbatch's answer was ambiguous), or
  // "absent" (an unconfirmed attempt that Slurm was later shown not to have).
  std::string outcome = "intent";
  std::string job_id, cluster, reason, decided_at;
  std::string cancel_requested_at;

  bool settled() const { return outcome == "submitted" || outcome == "rejected" || outcome == "absent"; }
};

struct RunShape {
  std::string label, job_name, script, partition;
  std::string spec_file, output_dir;  // absolute; a race of several specs has one per shape
  int nodes = 1, gpus_per_node = 0, ranks_per_node = 1;
  bool per_gpu = false;
  long long time_s = 0;
};

struct Run {
  std::string dir;  // absolute
  std::string id;   // the directory's name
  std::string name, cluster, spec_file, spec_hash, created_at, cwd, output_dir;
  std::vector<std::string> overrides;
  std::vector<RunShape> shapes;
  std::vector<Attempt> attempts;

  const RunShape* shape(const std::string& label) const;
  // The latest attempt that made a job, if any.
  const Attempt* latest_job() const;
};

// --runs, else $DDPCTL_RUNS, else ./runs.
std::string runs_root(const std::string& flag);
std::string utc_now_iso();
long long parse_utc_iso(const std::string& s);  // 0 if unreadable
std::string new_token();                        // 12 lowercase hex characters
std::string job_comment(const std::string& token);
// FNV-1a of what makes two submissions "the same run": spec text, path, overrides.
std::string spec_hash(const std::string& spec_path, const std::string& spec_text,
                      const std::vector<std::string>& overrides);

// Creates the run directory with spec.yaml, run.json, the scripts and an empty ledger.
Run create_run(const std::string& root, const ResolvedRun& resolved, const std::string& spec_text,
               const std::vector<std::string>& overrides, const std::string& hash,
               const std::vector<std::pair<std::string, std::string>>& scripts);

// One spec of a run made from several (`ddpctl race A.yaml B.yaml`): its
// shapes join the run's, each remembering its spec and output folder.
struct RunPart {
  const ResolvedRun* resolved;
  std::string spec_text;
};
// As above; the run's name, cluster and cwd come from the first part. With
// several parts the specs are kept as spec.yaml (the first), spec.2.yaml, ...
Run create_run(const std::string& root, const std::vector<RunPart>& parts, const std::vector<std::string>& overrides,
               const std::string& hash, const std::vector<std::pair<std::string, std::string>>& scripts);
void save_ledger(const Run& run);
Run load_run(const std::string& dir);
// Every run under root, oldest first; unreadable ones are skipped.
std::vector<Run> list_runs(const std::string& root);
// A run by directory path, directory name, unique prefix of it, or run name
// (the latest run of that name). Throws UserError when none or several match.
Run find_run(const std::string& root, const std::string& query);

}  // namespace ddpctl
