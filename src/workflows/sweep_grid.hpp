#pragma once
// `ddpctl sweep SPEC` of a grid (grid.hpp): every cell checked first, then
// one Slurm job array per shape (cells whose #SBATCH lines are the same),
// one run folder for the sweep (docs/sweeps.md).
//
// The run folder holds, besides the spec and ledger: grid.json (the cells:
// name, values, array, folder), cells/<index>.sh (each cell's whole job
// script, rendered from the templates as a run of its own), and per shape
// an array script whose task N runs cells/<N + offset>.sh. A task index is
// its cell's index, so a task, its requeue and a retry of it are the cell.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "slurm/context.hpp"
#include "runs/output.hpp"
#include "script/resolve.hpp"
#include "script/runs.hpp"
#include "workflows/sweep.hpp"

namespace ddpctl {

// One array of a grid's sweep: the cells of one shape.
struct GridArray {
  std::string label;             // the shape's label ("2x1"), made unique among the arrays
  std::string script;            // its file in the run folder: <name>-<label>.array.sbatch
  std::vector<int> cells;        // cell indices, ascending
  const ResolvedRun* first;      // a cell of it
  const ResolvedShape* shape;    // that cell's shape: its directives are the array's
  std::string cells_dir = "cells";  // where its cells' scripts are, in the run folder
};
// The cells grouped by their #SBATCH lines, in order of their first cell.
// A raced grid (race, then sweep: the spec has alternatives) has one array
// per alternative, each of every cell, its scripts in cells/<label>/; its
// cells must agree on each alternative's #SBATCH lines (else a UserError at
// the grid).
std::vector<GridArray> group_cells(const ResolvedGrid& grid);
// The spec has alternatives: cell 0 races them, the rest run on the winner.
bool is_raced(const ResolvedGrid& grid);

// The array script of one shape: its #SBATCH lines, then `exec` of the
// cell's script in `run_dir`/<cells_dir>/ for the task's index (+ $1, an offset,
// for arrays split below the site's MaxArraySize).
std::string array_script(const GridArray& array, const std::string& run_dir, const std::string& spec_file);

// One sbatch of an array's cells below the site's MaxArraySize: task N runs
// cell N + offset (cells 0..M-1 offset 0, M..2M-1 offset M, ...).
struct ArrayPart {
  int offset = 0;
  std::vector<int> tasks;  // ascending
};
// `cells` ascending; max_array_size 0: no limit known.
std::vector<ArrayPart> split_array(const std::vector<int>& cells, long long max_array_size);
// The site's MaxArraySize (`scontrol show config`); 0 when it cannot be read.
long long max_array_size(SlurmClient& slurm);

// Submits `cells` (ascending) of one shape as arrays, split below the
// site's MaxArraySize (max_size, 0: no limit); says each through `out`
// ("shape L: <verb> job array N ..."). Returns how many failed. `after`
// (max_parallel: 1 over several arrays: one cell of the sweep at a time):
// each array waits for the one submitted before it to end (afterany), and
// becomes the one to wait for.
int submit_grid_cells(Run& run, const RunShape& shape, const std::vector<int>& cells, std::optional<int> max_parallel,
                      long long max_size, SlurmClient& slurm, Output& out, const std::string& verb,
                      std::string* after = nullptr);
// A raced grid's cells after its first: 1 .. n-1.
std::vector<int> rest_of_grid(size_t n);

// The cell's script's file name inside the run folder.
std::string cell_script_name(int index);

// `ddpctl gen` of a grid: every cell's script (cells/<index>.sh) and each
// array's, written into `out_dir` (which stands for the run folder: the
// arrays exec the cells' scripts there); returns the paths, arrays first.
std::vector<std::pair<std::string, std::string>> render_grid_scripts(const std::string& spec,
                                                                     const std::vector<std::string>& sets,
                                                                     const std::string& out_dir,
                                                                     const std::string& templates_dir);
std::vector<std::string> write_grid_scripts(const std::string& spec, const std::vector<std::string>& sets,
                                            const std::string& out_dir, const std::string& templates_dir);

// Submits a grid spec (SweepRequest.spec has `grid:`/`include:`): one
// sbatch --array per shape, each recorded before and after like `submit`'s
// (exactly once; re-running it finds the sweep's arrays still queued).
void run_grid_sweep(const SweepRequest& request, Context& ctx, Output& out);

// Race, then sweep (docs/race.md): once the raced first cell of a grid has
// a winner, the other cells go as arrays on the winner's shape, once (the
// sweep's lock and ledger: the winning job, `status` and a re-run `sweep`
// may all ask). Says why not otherwise.
struct GridContinuation {
  bool submitted = false;
  std::string why_not;
  std::string winner;  // "shape 2x1 (job 812)"
};
// `locked`: the caller holds the sweep's lock already.
GridContinuation continue_raced_grid(Run& run, Context& ctx, Output& out, bool locked = false);

// `ddpctl sweep retry SWEEP`: the cells that failed, were cancelled, timed
// out (any end but COMPLETED) or were never submitted, submitted again into
// the same sweep as one array per shape of exactly those indices
// (--array=3,7,9); `cells` (names) picks them instead. A cell whose state
// cannot be read, or that is still queued or running, is refused by name.
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

}  // namespace ddpctl
