#pragma once
// One cell of a grid (grid.hpp) as a spec of its own: its document, its
// placeholders and the variables its program gets (docs/sweeps.md "What a
// cell's program gets").
//
// A grid value reaches the program as exactly one word, whatever it holds:
// in a list's word (command:, trainer.extra_args) it is put in as it is (the
// word is quoted as a whole when the script is rendered); in an env: value
// or trainer.checkpoint_dir the same; in a shell line (a string command:)
// it is never pasted, the line reads the cell's variable instead
// ("${DDPCTL_GRID_LR-}", quoted for where it stands), so the shell never
// parses the value.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "spec/grid.hpp"

namespace ddpctl {

// The documents of a grid's cells, from one reading of the spec (`spec`, its
// overrides applied, the document read_grid read). A cell's document is a
// copy of it without grid: (copy_with_marks: every value keeps its line, no
// two cells share a node), the cell's values set (copies of the grid's
// nodes), and placeholders replaced in command:, trainer.extra_args, env:
// values and trainer.checkpoint_dir (a checkpoint folder without one gets
// the cell's folder name appended, so cells never share a checkpoint unless
// the spec says so). An unknown placeholder is a UserError at its line.
class CellDocuments {
 public:
  explicit CellDocuments(const YamlDocument& spec);
  YamlDocument of(const Grid& grid, const GridCell& cell) const;

 private:
  YamlDocument rest_;  // the spec without grid:
};
// The same for one cell, reading `text` (tests).
YamlDocument cell_document(const std::string& file, const std::string& text, const std::vector<std::string>& overrides,
                           const Grid& grid, const GridCell& cell);

// How a placeholder's value goes into the text it stands in.
enum class PlaceholderUse {
  Literal,    // the value itself (a list's word, an env: value, a path)
  ShellLine,  // the cell's variable, quoted for where it stands in the line
};
// "{lr}" -> the cell's value (or its variable); nullopt when `text` has no
// placeholder. `{{` and `}}` are literal braces; `${...}` is the shell's,
// left alone. A problem (an unknown name; in a shell line, a placeholder
// inside ${...}) is put in `problem`, the text unchanged. `inserted`, when
// given, gets each value put in (Literal).
std::optional<std::string> replace_placeholders(const std::string& text, const Grid& grid, const GridCell& cell,
                                                std::string* problem, PlaceholderUse use = PlaceholderUse::Literal,
                                                std::vector<std::string>* inserted = nullptr);

// The variables a cell's program gets: DDPCTL_CELL (its name) and
// DDPCTL_GRID_<NAME> (upper case; other characters as _) per key it sets.
std::vector<std::pair<std::string, std::string>> cell_environment(const Grid& grid, const GridCell& cell);

}  // namespace ddpctl
