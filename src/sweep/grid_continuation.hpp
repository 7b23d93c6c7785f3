#pragma once
// Race, then sweep (docs/race.md): once the raced first cell of a grid has
// a winner, the other cells go as arrays on the winner's shape, once (the
// sweep's lock and ledger: the winning job, `status` and a re-run `sweep`
// may all ask).
#include <string>
#include <vector>

#include "runs/output.hpp"
#include "runs/run_store.hpp"
#include "slurm/context.hpp"

namespace ddpctl {

// What continue_raced_grid did; says why not otherwise.
struct GridContinuation {
  bool submitted = false;
  std::string why_not;
  std::string winner;  // "shape 2x1 (job 812)"
};
// `locked`: the caller holds the sweep's lock already.
GridContinuation continue_raced_grid(Run& run, Context& ctx, Output& out, bool locked = false);

}  // namespace ddpctl
