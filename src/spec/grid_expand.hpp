#pragma once
// A grid's cells from what its `grid:` says (grid_read.hpp reads it): the
// product of the keys' lists, first key slowest; exclude: drops the cells it
// matches, include: extends the cells it matches on the grid's keys or is a
// cell of its own; then each key and cell is named (the cell's folder name,
// the variables its program gets), each within Linux's 128 KiB for one
// environment string.
#include <vector>

#include "base/diagnostics.hpp"
#include "spec/grid.hpp"
#include "base/yaml_reader.hpp"

namespace ddpctl {

// A partial cell of include: or exclude:, its keys normalized.
struct GridPartial {
  std::vector<GridValue> values;
  Location where;
};

// What grid: says, before it is expanded.
struct GridSection {
  std::vector<std::vector<GridValue>> axes;  // grid: keys' lists, in file order
  std::vector<GridPartial> excludes, includes;
};

// The cells, in order and named. Adds to grid.keys the keys only include:
// entries set, and names every key. Throws UserError with every problem (an
// exclude that matches no cell, two cells of one name, two keys of one
// variable, a variable over 128 KiB, more than kMaxCells cells); `doc` is
// the spec the section was read from, for the lines of its values.
std::vector<GridCell> expand_grid(const YamlDocument& doc, const GridSection& section, Grid& grid);

}  // namespace ddpctl
