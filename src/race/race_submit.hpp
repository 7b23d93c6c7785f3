#pragma once
// Submitting a race group (docs/race.md): every shape as its own job, each
// job id recorded before the claim is looked at, so that the first job to
// start claims the group and cancels the rest, or ddpctl does.
#include <string>
#include <vector>

#include "explain/race.hpp"
#include "runs/output.hpp"
#include "runs/run_store.hpp"
#include "slurm/context.hpp"
#include "race/race_group.hpp"
#include "submit/earlier_runs.hpp"
#include "submit/submit_attempt.hpp"

namespace ddpctl {

struct RaceSubmission {
  enum class Kind { Submitted, AlreadySubmitted, DryRun };
  Kind kind = Kind::Submitted;
  ActiveJob active;                   // AlreadySubmitted
  Run run;                            // Submitted
  std::vector<RankedShape> ranking;   // with rank_by (a dry run's too)
  std::string ranking_note;           // why a ranking by finish fell back to start
  std::vector<std::string> submitted; // Submitted: "job N (shape L)", in submission order
  double lock_waited_s = 0;
};
// [the group identity's lock] earlier runs -> preflight -> run directory and
// race folder -> scripts -> (ranking) -> each shape submitted, its job id
// recorded before the claim is looked at [lock released]. Says per shape
// what happened through `out`; throws UserError when no shape could be
// submitted.
RaceSubmission submit_race(const RaceGroup& group, const RaceRequest& request, Context& ctx, Output& out);

// The preflight of a race without ranking: a shape that fails it stops the
// whole race (the user named it), but a shape the site's limits never let
// start is dropped with its reason, a warning on `out` (it would only pend),
// unless every shape is: then a UserError. Returns the labels dropped.
std::vector<std::string> preflight_race(const RaceGroup& group, SlurmClient& slurm, Output& out);

// Submits the shapes in `order` (labels) into `generation` of the race; each
// job id is recorded before the claim is looked at, so a winner can always
// cancel it or ddpctl does. Stops once the generation is claimed (or a newer
// one opened). Returns "job N (shape L)" per job made. With `array` (a raced
// grid's first cell: "0"), each shape is that job array (Attempt::race).
// With `leave_out` (a re-race: the nodes the requeued winner's job leaves
// out), each shape leaves them out too (sbatch_leave_out).
std::vector<std::string> submit_race_shapes(Run& run, const std::vector<std::string>& order, int generation,
                                            SlurmClient& slurm, Output& out, const std::string& array = "",
                                            const std::vector<std::string>& leave_out = {});

// sbatch's command-line options that make the job of a rendered `script`
// leave `nodes` out as well: one --exclude= with its own #SBATCH --exclude=
// nodes and these (the command line overrides the script's line). A node the
// script asks for by name (--nodelist=) cannot also be excluded: it leaves
// that list (--nodelist= of the rest, as exclude_nodes does for a requeued
// job), unless it is all the list has; then it stays, named in `kept`.
std::vector<std::string> sbatch_leave_out(const std::string& script, const std::vector<std::string>& nodes,
                                          std::vector<std::string>* kept = nullptr);

}  // namespace ddpctl
