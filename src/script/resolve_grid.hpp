#pragma once
// A grid spec resolved (grid.hpp): each cell as a run of its own, or, for a
// big grid whose cells differ only in their variables, as one script and
// a table (docs/sweeps.md "Big grids"): a grid of more than
// kTableFromCells cells whose every key is env.NAME is read and resolved
// once, as a cell whose values are tokens; every cell's variables are that
// run's with its tokens replaced by the cell's values. The job script is
// rendered once for every cell and reads the cell's line of the table
// (cells/cell.env) at the place its env: would be; its array script gives it
// the cell's index. A grid of 100,000 cells is then one script and a table
// of 100,000 lines, not 100,000 scripts: the time and the inode quota of one.
//
// Nothing of a cell's may differ from what its own script would hold: the
// table is used only where that is checked. Any of these, and the grid is
// resolved and rendered cell by cell as any grid is: a key that is not
// env.NAME; a cell without a value of every key, or a value that is not a
// plain scalar; a spec with alternatives (a raced grid); a token anywhere in
// the script but env: (a placeholder in a list command, trainer.extra_args,
// a checkpoint folder; a --templates part that writes env: itself); a
// cell's variable that its own reading would refuse or that refers to its
// own name; and two cells (the first and the last) whose own scripts,
// resolved and rendered alone, differ from the shared run's.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "script/render.hpp"
#include "script/resolve.hpp"

namespace ddpctl {

// Grids up to this many cells have a script per cell (cells/<index>.sh).
constexpr size_t kTableFromCells = 1000;

struct CellTable;
struct ResolvedGrid {
  Grid grid;
  std::vector<ResolvedRun> cells;  // cells[i] is grid.cells[i]'s run; a table grid's: one, the run every cell shares
  std::string text;                // the spec as read
  std::shared_ptr<const CellTable> table;  // set: a table grid
  // One site of a race across sites (docs/race.md "Across sites"): its first
  // cell races (even one shape) and its winner waits at the gate.
  AcrossSites across;
};

// Each cell resolved as a run of its own. Throws UserError with every
// problem of every cell, each naming the cells it is in (or none when all
// have it).
// `site`: read at that site of a spec naming sites (spec_sites.hpp).
ResolvedGrid load_and_resolve_grid(const std::string& spec_path, const std::vector<std::string>& overrides,
                                   const std::string& site = "");

struct CellTable {
  // The cell's variables, as its own script would set them (grid_scripts.hpp):
  // the shared run's env: (ResolvedGrid::cells[0]) with the cell's values
  // for the tokens, then DDPCTL_CELL, DDPCTL_GRID_<NAME>, DDPCTL_CELL_DIR
  // (`cell_dir`) and DDPCTL_CHECKPOINT_DIR. `chosen_checkpoint`, when
  // given, gets the checkpoint folder ddpctl chose (created at submit), else "".
  EnvList env_of(const ResolvedRun& shared, const Grid& grid, const GridCell& cell, const std::string& cell_dir,
                 std::string* chosen_checkpoint = nullptr) const;

  // Each variable of the shared run in pieces: text, or a slot (a key's
  // value, then the cell's name, its folder's name, its folder, its
  // checkpoint folder).
  struct Piece {
    std::string text;
    int slot = -1;
  };
  std::vector<std::pair<std::string, std::vector<Piece>>> variables;
};

// The grid of `spec_path` as a table (ResolvedGrid::table set, cells holding
// only the shared run) when it is one (above), checked with the templates
// of `templates_dir` ("" : the bundled ones); else load_and_resolve_grid's.
ResolvedGrid load_grid(const std::string& spec_path, const std::vector<std::string>& overrides,
                       const std::string& templates_dir, const std::string& site = "");

}  // namespace ddpctl
