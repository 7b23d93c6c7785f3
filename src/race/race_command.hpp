#pragma once
// `ddpctl race SPEC...` (and `submit` of a spec with alternatives) as a
// whole (docs/race.md): plan, dry run or submission of the group, then the
// wait for a winner and, with --follow, for its end.
#include "runs/output.hpp"
#include "runs/run_store.hpp"
#include "slurm/context.hpp"
#include "race/race_group.hpp"

namespace ddpctl {

// Waits until the group has a winner, says who won, after how long, and who
// stands down; with `follow`, then follows the winner to its end. Throws
// UserError when every shape's job ended without claiming the group.
void wait_for_race(Context& ctx, const Run& run, bool follow, Output& out);

// With `plan`, the ranking and nothing submitted; else requeued race
// winners raced again first (not for a dry run; a failure is a warning on
// `side`), then the group submitted or dry-run, each outcome a line on
// `out`, and with `wait`/`follow` the wait for a winner (and its end).
// Returns how long the run's lock held it up.
double race_command(const RaceRequest& req, bool plan, bool wait, bool follow, Context& ctx, Output& out, Output& side);

}  // namespace ddpctl
