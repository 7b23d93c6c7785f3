#pragma once
// A grid's arrays against the user's submit limits (MaxSubmitJobs and its
// kin, site_limits_submit.hpp submit_limits), before any sbatch: Slurm counts every
// task of an array as a job there and refuses a whole array's sbatch that
// would go over one, so a grid that does not fit is refused with the limit
// named, and nothing is queued (docs/sweeps.md "Submit limits").
#include <map>
#include <string>
#include <vector>

#include "slurm/site_limits_submit.hpp"
#include "runs/output.hpp"
#include "runs/run_record.hpp"
#include "slurm/slurm.hpp"
#include "sweep/grid_arrays.hpp"

namespace ddpctl {

// Throws UserError at `where` naming every limit `arrays` go over (with the
// jobs already queued or running there); a limit whose usage could not be
// read is held against the arrays alone, and that is noted through `out`.
void refuse_over_submit_limits(const std::vector<SubmitAsk>& arrays, const SiteLimits& limits, SubmitWhat what,
                               const Location& where, Output& out);

// A sweep's arrays, each its cells of its shape (account, QOS, partition).
std::vector<SubmitAsk> grid_submit_asks(const std::vector<GridArray>& arrays, const SiteLimits& limits);
// The sets of a sweep's arrays that may be queued at once, each to be held
// against the limits: a grid's arrays; a raced grid (`raced`, of `cells`
// cells) asks for one job per shape, then the other cells on whichever wins,
// so one set per possible winner: every shape's array of cell 0, and the
// winner's of cells 1 .. cells-1.
std::vector<std::vector<GridArray>> grid_submit_cases(const std::vector<GridArray>& arrays, bool raced, size_t cells);

// A retry's arrays: `cells` by shape label, each landing where the sweep's
// array script of that shape sends it (its #SBATCH --account, --qos,
// --partition lines).
std::vector<SubmitAsk> retry_submit_asks(const Run& run, const std::map<std::string, std::vector<int>>& cells,
                                         const SiteLimits& limits);

// `sweep retry`'s preflight: reads the site's limits (notes what it could
// not) and refuses a retry that does not fit.
void check_retry_submit_limits(const Run& run, const std::map<std::string, std::vector<int>>& cells,
                               SlurmClient& slurm, Output& out);

}  // namespace ddpctl
