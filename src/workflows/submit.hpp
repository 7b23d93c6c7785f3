#pragma once
// Submission: the ledgered sbatch call, settling attempts whose outcome is
// unknown by looking their token up in Slurm, finding earlier runs of the same
// identity (re-running `submit` never makes a second job), the one-shape
// `submit` workflow, and waiting for a submitted job.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "slurm/context.hpp"
#include "base/lock.hpp"
#include "runs/output.hpp"
#include "script/resolve.hpp"
#include "script/runs.hpp"
#include "slurm/slurm.hpp"

namespace ddpctl {

enum class Presence { Found, Absent, Unknown };
struct Lookup {
  Presence presence = Presence::Unknown;
  Job job;          // when Found
  std::string why;  // when Unknown: what could not be asked
};
// Looks for the job carrying `ddpctl:<token>` in squeue, then in sacct.
Lookup find_job_by_token(SlurmClient& slurm, const std::string& token, long long intent_time);

// Settles every attempt of `run` that has no confirmed outcome; saves the ledger
// when anything changed. Returns the attempts it could not settle.
std::vector<Attempt> settle_attempts(Run& run, SlurmClient& slurm);

// sbatch arguments for a shape's script in `run`; `extra` (e.g.
// --dependency=afterany:N) goes before the script.
std::vector<std::string> sbatch_args(const Run& run, const RunShape& shape, const std::string& token,
                                     const std::vector<std::string>& extra = {});

// Adopts jobs carrying the token of an attempt that made none as far as the
// ledger knew (intent, unconfirmed, absent): found in `queue`, it is
// recorded as submitted. Returns how many were adopted.
int adopt_found_jobs(Run& run, const std::vector<Job>& queue);

// Records the intent (with this ddpctl's pid and host), runs sbatch, records
// the outcome, and for an ambiguous outcome looks the token up once. Every
// record is a read-modify-write of the ledger. Returns the final attempt.
// `array`: the --array value (in `extra` too) of a grid's array, recorded;
// `array_offset` goes after the script (its $1: task N runs cell N + offset);
// `race`: a raced grid's first cell (Attempt::race): "race" follows the
// offset, and the array script runs the cell's race script.
Attempt submit_attempt(Run& run, const RunShape& shape, SlurmClient& slurm, const std::vector<std::string>& extra = {},
                       const std::string& array = "", int array_offset = 0, bool race = false);

// Earlier runs of one identity (run_identity), settled first.
struct ActiveJob {
  std::string run_id, job_id;
};
struct EarlierRuns {
  std::optional<ActiveJob> active;  // a job of theirs still queued or running
  std::optional<Run> retry;         // a run whose every attempt was shown to make no job
};
// Settles the unconfirmed attempts of every run with this identity, then
// finds a job of theirs still queued or running, and a run to retry in.
// Throws UserError when an attempt cannot be settled or a job's state cannot
// be read: submitting then could make a second job.
EarlierRuns find_earlier_runs(const std::string& root, const std::string& identity, SlurmClient& slurm);

// Slurm writes the jobs' logs there; it must exist before sbatch.
void create_output_dir(const ResolvedRun& resolved);

// The shape `label` names (empty: the spec's only shape); a UserError that
// lists the labels otherwise.
const ResolvedShape& choose_shape(const ResolvedRun& run, const std::string& label);

// Whether `ddpctl submit` races the spec's shapes (alternatives, no --shape)
// rather than submitting one. A sweep spec without --shape is refused.
bool submits_as_race(const ResolvedRun& run, const std::string& shape_label);

struct SubmitRequest {
  std::string spec;                // the spec file, as given
  std::vector<std::string> sets;   // --set overrides, as given
  std::string shape;               // --shape label; empty for a spec of one shape
  std::string runs_root, templates_dir;
  bool dry_run = false, preflight = true, again = false;
  bool snapshot = true;            // false: --no-snapshot
  std::string snapshot_from;       // --snapshot-from: a snapshot sent by a remote submit (take_snapshot's `given`)
  std::string rank_by;             // only for races ("start", "finish"): refused here
  // --fit-time: when a reservation holds every node that fits before the time
  // limit would end, the longest time limit that starts the job now.
  bool fit_time = false;
};
struct SubmitResult {
  enum class Kind { Submitted, AlreadySubmitted, DryRun };
  double lock_waited_s = 0;  // how long another ddpctl submitting the same run held it up
  Kind kind = Kind::Submitted;
  Run run;           // Submitted
  Attempt attempt;   // Submitted
  ActiveJob active;  // AlreadySubmitted: the job still queued or running
  std::string would_run;  // DryRun: the sbatch command line that would run
  std::optional<long long> fitted_time_s;  // --fit-time set this time limit
};
// validate (done by resolving) -> [the run identity's lock] earlier runs ->
// preflight -> run directory -> intent -> sbatch -> outcome [lock released].
// A second ddpctl submitting the same run waits on the lock (saying so
// through `out` after a second) and then finds the first one's job. Throws
// UserError when sbatch rejected the job or its answer was unclear (the
// attempt is recorded either way).
SubmitResult submit_one(const ResolvedRun& resolved, const SubmitRequest& request, Context& ctx, Output& out);

// Holds the lock of one run identity (runs.hpp's identity_lock_path) while
// it lives; says through `out` whom it waits for.
class IdentityLock {
 public:
  IdentityLock(const std::string& root, const std::string& identity, Context& ctx, Output& out);
  double waited_s() const;

 private:
  std::unique_ptr<FileLock> lock_;
};

// Says the job's state whenever it changes until the job starts (with
// `follow`, until it ends, with the trainer's progress). Returns when it
// started or completed; throws UserError when it ended any other way.
void wait_for_job(Context& ctx, const Run& run, const Attempt& attempt, bool follow, Output& out);

}  // namespace ddpctl
