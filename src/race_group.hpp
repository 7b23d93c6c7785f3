#pragma once
// Hybrid mode's workflows (docs/race.md): `ddpctl race SPEC...`, and
// `ddpctl submit` of a spec with alternatives, submit every shape as one race
// group; the first job to start claims the group and cancels the rest.
// --rank-by-estimate and --plan ask `sbatch --test-only` when each shape
// would start. race.hpp holds the group's records; this file what is done
// with them.
#include <string>
#include <vector>

#include "context.hpp"
#include "output.hpp"
#include "race.hpp"
#include "resolve.hpp"
#include "runs.hpp"
#include "submit.hpp"

namespace ddpctl {

// Every spec of the race, resolved, with the shapes' labels made unique
// across specs. entries[i] is the i-th shape of the group.
struct RaceGroup {
  std::vector<ResolvedRun> parts;
  std::vector<SpecSource> specs;  // parts[k]'s file as given, and its text
  struct Entry {
    size_t part, shape;
  };
  std::vector<Entry> entries;
  std::string identity;  // run_identity of every spec, racing

  const ResolvedShape& shape(const Entry& e) const { return parts[e.part].shapes[e.shape]; }
  std::vector<std::string> labels() const;
};

// Loads and resolves each spec and checks they can race together: one
// cluster, no sweep, no spec twice, labels unique (a label used by two specs
// is prefixed with the spec's name), at least two shapes.
RaceGroup load_race_group(const std::vector<std::string>& specs, const std::vector<std::string>& sets);

struct RaceRequest {
  std::vector<std::string> specs, sets;
  std::string runs_root, templates_dir;
  bool dry_run = false, preflight = true, again = false;
  bool rank_by_estimate = false;  // drop shapes that cannot run, submit the rest earliest first
};

// The ranking as printed: a heading, then one line per shape.
std::vector<std::string> ranking_lines(const std::vector<RankedShape>& ranking, long long now);
// The labels of the shapes a ranking keeps, in its order.
std::vector<std::string> kept_labels(const std::vector<RankedShape>& ranking);

// `race --plan`: the ranking from scripts rendered into a scratch folder;
// nothing is submitted and no run is recorded.
std::vector<RankedShape> plan_race(const RaceGroup& group, const RaceRequest& request, SlurmClient& slurm);
// A UserError naming each shape's reason when a ranking keeps no shape.
void throw_if_none_runs(const std::vector<RankedShape>& ranking);

struct RaceSubmission {
  enum class Kind { Submitted, AlreadySubmitted, DryRun };
  Kind kind = Kind::Submitted;
  ActiveJob active;                   // AlreadySubmitted
  Run run;                            // Submitted
  std::vector<RankedShape> ranking;   // with rank_by_estimate (a dry run's too)
  std::vector<std::string> submitted; // Submitted: "job N (shape L)", in submission order
  double lock_waited_s = 0;
};
// [the group identity's lock] earlier runs -> preflight -> run directory and
// race folder -> scripts -> (ranking) -> each shape submitted, its job id
// recorded before the claim is looked at [lock released]. Says per shape
// what happened through `out`; throws UserError when no shape could be
// submitted.
RaceSubmission submit_race(const RaceGroup& group, const RaceRequest& request, Context& ctx, Output& out);

// Waits until the group has a winner, says who won, after how long, and who
// stands down; with `follow`, then follows the winner to its end. Throws
// UserError when every shape's job ended without claiming the group.
void wait_for_race(Context& ctx, const Run& run, bool follow, Output& out);

}  // namespace ddpctl
