#pragma once
// Run directories: runs/<name>-<utc>-<token>/ with the spec as given, the
// resolved shapes (run.json), the rendered scripts, and the ledger
// (ledger.json) of every sbatch attempt. The ledger is rewritten atomically
// before sbatch runs (intent) and after (outcome), so a crash at any point
// leaves a record that `submit` can settle by looking the token up in Slurm.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "resolve.hpp"

namespace ddpctl {

// What became of one sbatch attempt, as the ledger records it.
enum class Outcome {
  Intent,       // recorded before sbatch; sbatch may be running, or ddpctl died before the outcome
  Submitted,    // a job was made (job_id)
  Rejected,     // sbatch refused it; no job
  Unconfirmed,  // sbatch's answer was ambiguous: a job may or may not exist
  Absent,       // an intent or unconfirmed attempt that Slurm was later shown not to have
};
// "intent", "submitted", ... as in ledger.json.
const char* outcome_name(Outcome outcome);
// The ledger's word for an outcome; nullopt for a word ddpctl never wrote.
std::optional<Outcome> parse_outcome(const std::string& name);

struct Attempt {
  std::string token;   // unique; the job's --comment is "ddpctl:<token>"
  std::string shape;   // shape label
  std::string script;  // file name inside the run directory
  std::vector<std::string> argv;
  std::string intent_at;  // UTC, ISO 8601
  Outcome outcome = Outcome::Intent;
  std::string job_id, cluster, reason, decided_at;
  std::string cancel_requested_at;
  int pid = 0;       // the ddpctl that ran sbatch, and its host: while it
  std::string host;  // lives, its attempt is in flight, never absent

  bool settled() const {
    return outcome == Outcome::Submitted || outcome == Outcome::Rejected || outcome == Outcome::Absent;
  }
};

struct RunShape {
  std::string label, job_name, script, partition;
  std::string spec_file, output_dir;  // absolute; a race of several specs has one per shape
  int nodes = 1, gpus_per_node = 0, ranks_per_node = 1;
  bool per_gpu = false;
  long long time_s = 0;
  int max_restarts = 0;  // requeue.max_restarts (0: no requeue, or a record from before it was kept)
  std::optional<ProgressSpec> progress;  // the spec's progress: section
  std::string comment;  // the spec's comment:, after ddpctl's token in the job's --comment
};

struct Run {
  std::string dir;  // absolute
  std::string id;   // the directory's name
  std::string name, cluster, spec_file, spec_hash, created_at, cwd, output_dir;
  std::string ddpctl_version;  // the ddpctl that submitted it ("" before runs recorded it)
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
// A job's --comment: "ddpctl:<token>", then the user's own comment, if any.
std::string job_comment(const std::string& token, const std::string& user_comment = "");
// Whether a job's comment (as squeue or sacct shows it) carries `token`.
bool comment_has_token(const std::string& comment, const std::string& token);

// One spec file as submitted: its path and the text read from it.
struct SpecSource {
  std::string path, text;
};
// What makes two submissions "the same run", as a hash: the specs (absolute
// paths and texts), the --set overrides, and which shape was submitted
// (`shape`), or, with `shape` empty, that every shape races as one group.
// submit, race and sweep all ask this one function.
std::string run_identity(const std::vector<SpecSource>& specs, const std::vector<std::string>& overrides,
                         const std::string& shape);

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
// Writes a new run's (empty) ledger. Every later change goes through
// update_ledger.
void save_ledger(const Run& run);
// Read-modify-write of the ledger under its own lock (ledger.lock in the run
// directory): `change` gets the attempts as they are on disk now, never a
// stale copy, so concurrent ddpctls lose no update; `run.attempts` becomes
// the result. An attempt once recorded is never dropped.
void update_ledger(Run& run, const std::function<void(std::vector<Attempt>&)>& change);
// The attempt with `token` (appended, empty but for the token, if missing).
Attempt& attempt_by_token(std::vector<Attempt>& attempts, const std::string& token);
// Where the lock of one run identity lives: <runs>/.locks/<identity>.lock.
std::string identity_lock_path(const std::string& root, const std::string& identity);
Run load_run(const std::string& dir);
// Every run under root, oldest first; unreadable ones are skipped.
std::vector<Run> list_runs(const std::string& root);
// A run by directory path, directory name, unique prefix of it, or run name
// (the latest run of that name), or a job id of one of its attempts. Throws
// UserError when none or several match.
Run find_run(const std::string& root, const std::string& query);
// The attempt of `run` that made job `job_id`, or null.
const Attempt* job_attempt(const Run& run, const std::string& job_id);

}  // namespace ddpctl
