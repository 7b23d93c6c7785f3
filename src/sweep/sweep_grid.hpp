#pragma once
// `ddpctl sweep SPEC` of a grid (grid.hpp): every cell checked first, then
// one Slurm job array per shape (cells whose #SBATCH lines are the same,
// grid_arrays.hpp), one run folder for the sweep (docs/sweeps.md).
//
// The run folder holds, besides the spec and ledger: grid.json (the cells:
// name, values, array, folder), cells/<index>.sh (each cell's whole job
// script, rendered from the templates as a run of its own, grid_scripts.hpp),
// and per shape an array script whose task N runs cells/<N + offset>.sh.
#include "runs/output.hpp"
#include "slurm/context.hpp"
#include "sweep/sweep_request.hpp"

namespace ddpctl {

// Submits a grid spec (SweepRequest.spec has `grid:`/`include:`): one
// sbatch --array per shape, each recorded before and after like `submit`'s
// (exactly once; re-running it finds the sweep's arrays still queued).
void run_grid_sweep(const SweepRequest& request, Context& ctx, Output& out);

}  // namespace ddpctl
