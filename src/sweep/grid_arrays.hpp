#pragma once
// A grid's cells as job arrays (docs/sweeps.md): the cells grouped by their
// #SBATCH lines, one array per shape, and each array's script, whose task N
// runs cells/<N + offset>.sh. A task index is its cell's index, so a task,
// its requeue and a retry of it are the cell.
#include <string>
#include <vector>

#include "script/resolve.hpp"
#include "script/resolve_grid.hpp"

namespace ddpctl {

// One array of a grid's sweep: the cells of one shape.
struct GridArray {
  std::string label;             // the shape's label ("2x1"), made unique among the arrays
  std::string script;            // its file in the run folder: <name>-<label>.array.sbatch
  std::vector<int> cells;        // cell indices, ascending
  const ResolvedRun* first;      // a cell of it
  const ResolvedShape* shape;    // that cell's shape: its directives are the array's
  std::string cells_dir = "cells";  // where its cells' scripts are, in the run folder
  // A table grid's (resolve_grid.hpp) one script of every cell, in the run
  // folder (cells/cell.sh), run with the cell's index; empty: each cell's own.
  std::string shared_script;
};
// The cells grouped by their #SBATCH lines, in order of their first cell (a
// table grid's: one array of every cell, running cells/cell.sh).
// A raced grid (race, then sweep: the spec has alternatives) has one array
// per alternative, each of every cell, its scripts in cells/<label>/; its
// cells must agree on each alternative's #SBATCH lines (else a UserError at
// the grid).
std::vector<GridArray> group_cells(const ResolvedGrid& grid);
// The spec has alternatives: cell 0 races them, the rest run on the winner.
bool is_raced(const ResolvedGrid& grid);
// A raced grid's cells after its first: 1 .. n-1.
std::vector<int> rest_of_grid(size_t n);

// The array script of one shape: its #SBATCH lines, then `exec` of the
// cell's script in `run_dir`/<cells_dir>/ for the task's index (+ $1, an offset,
// for arrays split below the site's MaxArraySize); of a table grid, of its
// shared script with the cell's index.
std::string array_script(const GridArray& array, const std::string& run_dir, const std::string& spec_file);

// The cell's script's file name inside the run folder.
std::string cell_script_name(int index);
// A table grid's script of every cell, and its table of the cells' variables.
inline constexpr const char* kSharedCellScript = "cells/cell.sh";
inline constexpr const char* kCellTableFile = "cells/cell.env";

}  // namespace ddpctl
