#pragma once
// `ddpctl sweep retry SWEEP`: the cells that failed, were cancelled, timed
// out (any end but COMPLETED) or were never submitted, submitted again into
// the same sweep as one array per shape of exactly those indices
// (--array=3,7,9); `cells` (names) picks them instead. A cell whose state
// cannot be read, or that is still queued or running, is refused by name.
#include <string>
#include <vector>

#include "explain/status_grid.hpp"
#include "runs/output.hpp"
#include "runs/run_store.hpp"
#include "slurm/context.hpp"

namespace ddpctl {

struct RetryRequest {
  std::string sweep;               // a run of a grid: id, name, prefix or path
  std::vector<std::string> cells;  // --cells as given (cells_asked); empty: every cell that ended without completing
  std::string runs_root;
  bool dry_run = false;
  bool preflight = true;  // the user's submit limits, read and checked before sbatch (grid_limits.hpp)
};
void retry_grid_cells(const RetryRequest& request, Context& ctx, Output& out);

// The cell names `--cells` arguments ask for: an argument that is a cell's
// name (of `names`) is that cell, whatever it holds (a value may hold ';');
// any other is names separated by ';'.
std::vector<std::string> cells_asked(const std::vector<std::string>& args, const std::vector<std::string>& names);

// Which of the sweep's `cells` (cell_states) a retry submits: those `asked`
// (--cells as given), or without it every cell that ended without
// completing or was never submitted. `problems` says, one line each, what
// refuses the retry: a cell asked for that is not there or still queued or
// running, a cell whose end Slurm does not say, a raced grid's cell with no
// winner's shape to run on. `chosen` points into `cells`.
struct RetryChoice {
  std::vector<const CellState*> chosen;
  std::vector<std::string> problems;
};
RetryChoice choose_retry_cells(const Run& run, const std::vector<CellState>& cells,
                               const std::vector<std::string>& asked);

}  // namespace ddpctl
