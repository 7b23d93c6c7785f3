#pragma once
// A grid of runs in one spec (docs/sweeps.md). `grid:` maps field paths (the
// paths `--set` takes: trainer.lr, env.LR, nodes) to lists of values; every
// combination is a cell, the first key varying slowest. Beside them, under
// `grid:`, the grid's own fields: `exclude:` drops the cells that match one
// of its partial cells; `include:` adds its keys to the cells that match it
// on the grid's keys, or is a cell of its own where none does (GitHub
// Actions' matrix rules); `max_parallel:` is the array's %K. They live under
// `grid:` so that no name of the grid's is a run field's (`exclude:` at the
// top is the nodes a job must not run on).
//
// Each cell is the spec's document with the cell's values set where the
// grid's keys point and its placeholders ({lr}, {cell}) replaced
// (grid_cell.hpp): read and checked exactly as a spec of its own (spec.hpp),
// so a bad value in one cell is reported at the grid's line, naming the cell.
//
// This header is the grid as data; grid_read.hpp reads it from a spec, and
// grid_expand.hpp makes its cells.
#include <optional>
#include <string>
#include <vector>

#include "base/diagnostics.hpp"
#include "base/yaml_reader.hpp"

namespace ddpctl {

struct GridKey {
  std::string path;      // normalized field path: "trainer.lr"
  std::string name;      // what cell names and placeholders call it: "lr" (the path where two keys end alike)
  std::string variable;  // what the cell's program gets it as: "DDPCTL_GRID_LR"
  Location where;
};

struct GridValue {
  std::string key;   // GridKey::path
  std::string text;  // the value as cell names show it: "0.01", "[a, b]"
  YAML::Node node;   // as written (its mark: the line it came from)
  // Where it is in the grid: grid.<key>[index], or grid.include[include_entry].<key>.
  int index = -1, include_entry = -1;

  // YAML::Node's operator= writes into the node it refers to (the spec's
  // own, which every cell is copied from); a GridValue assigned (sorted,
  // replaced) refers to the other's node instead.
  GridValue& operator=(const GridValue& other) {
    key = other.key;
    text = other.text;
    node.reset(other.node);
    index = other.index;
    include_entry = other.include_entry;
    return *this;
  }
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
  Location where;  // the grid: entry
};

// The fields under `grid:` that are the grid's own, not field paths to vary.
const std::vector<std::string>& grid_own_fields();

// The most cells a grid may have.
constexpr size_t kMaxCells = 100000;

}  // namespace ddpctl
