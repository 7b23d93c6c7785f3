#pragma once
// The one-shape `submit` workflow and waiting for a submitted job. It
// builds on the ledgered sbatch (submit_attempt.hpp) and the look at earlier
// runs of the same identity under its lock (earlier_runs.hpp), which its
// users take from here too.
#include <optional>
#include <string>
#include <vector>

#include "slurm/context.hpp"
#include "runs/output.hpp"
#include "script/render.hpp"
#include "script/resolve.hpp"
#include "runs/run_store.hpp"
#include "slurm/slurm.hpp"
#include "submit/earlier_runs.hpp"
#include "submit/submit_attempt.hpp"

namespace ddpctl {

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
  // Across sites (docs/race.md "Across sites"): what the coordinator asks
  // each site's ddpctl: --site (only that site's shapes of a spec naming
  // sites), --coordinator (its run on the submitting machine) and
  // --gate-timeout. Such a submission is always a race (of one shape or more).
  AcrossSites across;
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

// Says the job's state whenever it changes until the job starts (with
// `follow`, until it ends, with the trainer's progress). Returns when it
// started or completed; throws UserError when it ended any other way.
void wait_for_job(Context& ctx, const Run& run, const Attempt& attempt, bool follow, Output& out);

}  // namespace ddpctl
