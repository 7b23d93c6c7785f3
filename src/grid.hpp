#pragma once
// A grid of runs in one spec (docs/sweeps.md). `grid:` maps field paths (the
// paths `--set` takes: trainer.lr, env.LR, nodes) to lists of values; every
// combination is a cell, the first key varying slowest. `exclude:` drops the
// cells that match one of its partial cells; `include:` adds its keys to the
// cells that match it on the grid's keys, or is a cell of its own where none
// does (GitHub Actions' matrix rules). `max_parallel:` is the array's %K.
//
// Each cell is the spec's document with the cell's values set where the
// grid's keys point and its placeholders ({lr}, {cell}) replaced: read and
// checked exactly as a spec of its own (spec.hpp), so a bad value in one
// cell is reported at the grid's line, naming the cell.
#include <optional>
#include <string>
#include <vector>

#include "diagnostics.hpp"
#include "yaml_reader.hpp"

namespace ddpctl {

struct GridKey {
  std::string path;  // normalized field path: "trainer.lr"
  std::string name;  // what cell names and placeholders call it: "lr" (the path where two keys end alike)
  Location where;
};

struct GridValue {
  std::string key;   // GridKey::path
  std::string text;  // the value as cell names show it: "0.01", "[a, b]"
  YAML::Node node;   // as written (its mark: the line it came from)
  // Where it is in the document: grid[raw_key][index], or include[entry][raw_key].
  std::string raw_key;
  int index = -1, include_entry = -1;
};

struct GridCell {
  int index = 0;
  std::string name;      // "lr=0.01,seed=2" (keys in the grid's order)
  std::string dir_name;  // the name made safe as one folder name
  std::vector<GridValue> values;
  std::string value_of(const std::string& key_path) const;  // "" when the cell does not set it
};

struct Grid {
  std::vector<GridKey> keys;  // grid: keys, then the keys only include: entries set
  std::vector<GridCell> cells;
  std::optional<int> max_parallel;
  Location where;  // the grid: (or include:) entry
};

// The top-level fields of a grid (marked known by the spec reader).
const std::vector<std::string>& grid_fields();

// Reads grid:, include:, exclude: and max_parallel: from the document;
// nullopt when it has neither grid: nor include:. Throws UserError with
// every problem (a key that is no field path, an empty list, an exclude that
// matches no cell, two cells of one name, more than kMaxCells cells).
std::optional<Grid> read_grid(const YamlDocument& doc);
constexpr size_t kMaxCells = 100000;

// The document of one cell: the grid's fields removed, the cell's values
// set, placeholders replaced in command:, trainer.extra_args, env: values
// and trainer.checkpoint_dir (a checkpoint folder without one gets the
// cell's folder name appended, so cells never share a checkpoint unless the
// spec says so). An unknown placeholder is a UserError at its line.
// The document is parsed again from `text` (and `overrides` applied) for
// each cell, so that no two cells share a node and every value keeps its line.
YamlDocument cell_document(const std::string& file, const std::string& text, const std::vector<std::string>& overrides,
                           const Grid& grid, const GridCell& cell);

// "{lr}" -> the cell's value; nullopt when `text` has no placeholder.
// `{{` and `}}` are literal braces; `${...}` is the shell's, left alone.
// An unknown name is a problem (in `problem`, the text unchanged).
std::optional<std::string> replace_placeholders(const std::string& text, const Grid& grid, const GridCell& cell,
                                                std::string* problem);

// The variables a cell's program gets: DDPCTL_CELL (its name) and
// DDPCTL_GRID_<NAME> (upper case; other characters as _) per key it sets.
std::vector<std::pair<std::string, std::string>> cell_environment(const Grid& grid, const GridCell& cell);

}  // namespace ddpctl
