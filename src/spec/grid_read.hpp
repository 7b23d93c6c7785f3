#pragma once
// Reading a spec's `grid:` (grid.hpp says what it holds): its keys and
// lists, exclude:, include: and max_parallel:, each checked at its line,
// then expanded into cells (grid_expand.hpp).
#include <optional>

#include "spec/grid.hpp"
#include "base/yaml_reader.hpp"

namespace ddpctl {

// Reads `grid:` from the document; nullopt when it has none. Throws
// UserError with every problem (a key that is no field path, an empty list,
// an exclude that matches no cell, two cells of one name, two keys of one
// variable, a variable over Linux's 128 KiB, more than kMaxCells cells).
std::optional<Grid> read_grid(const YamlDocument& doc);

// Where the grid's fields were written at the top of a spec before they
// moved under `grid:` (include:, max_parallel:, and exclude: as a list of
// partial cells): an error at each saying the new spelling. The spec reader
// calls it; `exclude:` as a host list is the node field, left to it.
void refuse_old_grid_spelling(MapReader& top);

}  // namespace ddpctl
