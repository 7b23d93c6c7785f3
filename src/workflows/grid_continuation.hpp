#pragma once
// Race, then sweep (docs/race.md): once the raced first cell of a grid has
// a winner, the other cells go as arrays on the winner's shape, once (the
// sweep's lock and ledger: the winning job, `status` and a re-run `sweep`
// may all ask).
#include <string>
#include <vector>

#include "runs/output.hpp"
#include "script/runs.hpp"
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
// continue_raced_grid for the raced grids among `targets` (runs by name, id
// or path), or without targets the recent runs under `root` (status's), whose
// race has a winner and whose other cells were never submitted; file reads
// only until one needs it. Returns how many were submitted.
int continue_raced_grids_in(const std::string& root, const std::vector<std::string>& targets, long long now,
                            Context& ctx, Output& out);

}  // namespace ddpctl
