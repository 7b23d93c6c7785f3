#include "script/resolve_grid.hpp"

#include <fmt/format.h>
#include <map>
#include <string_view>

#include "base/files.hpp"
#include "base/overrides.hpp"
#include "base/paths.hpp"
#include "base/shell.hpp"
#include "base/text.hpp"
#include "script/render.hpp"
#include "spec/cluster.hpp"
#include "spec/grid_cell.hpp"
#include "spec/grid_read.hpp"
#include "spec/spec.hpp"
#include "spec/spec_setup.hpp"

namespace ddpctl {

namespace {

// A token stands for slot N in the shared run: "ddpctlTok<N>Q". The spec
// must not hold the mark itself (else the grid is read cell by cell).
constexpr std::string_view kTokenMark = "ddpctlTok";
std::string token(size_t slot) { return fmt::format("{}{}Q", kTokenMark, slot); }

// The slots every cell fills from its own: a value per key, its name, its
// folder's name; nullopt when a value is missing or not a plain scalar.
std::optional<std::vector<std::string>> cell_slots(const Grid& grid, const GridCell& cell) {
  if (cell.values.size() != grid.keys.size()) return std::nullopt;
  std::vector<std::string> slots;
  slots.reserve(grid.keys.size() + 4);
  for (const GridKey& k : grid.keys) {
    const GridValue* found = nullptr;
    for (const GridValue& v : cell.values)
      if (v.key == k.path) found = &v;
    // The value as the cell's env: reads it and as its placeholders put it in.
    if (!found || !found->node.IsScalar() || found->node.Scalar() != found->text) return std::nullopt;
    slots.push_back(found->text);
  }
  slots.push_back(cell.name);
  slots.push_back(cell.dir_name);
  return slots;
}

// `value` in pieces of text and slots; nullopt when a mark is not a whole token.
std::optional<std::vector<CellTable::Piece>> pieces_of(const std::string& value, size_t slots) {
  std::vector<CellTable::Piece> out;
  size_t at = 0;
  while (true) {
    size_t mark = value.find(kTokenMark, at);
    if (mark == std::string::npos) break;
    if (mark > at) out.push_back({value.substr(at, mark - at)});
    size_t digits = mark + kTokenMark.size(), end = digits;
    while (end < value.size() && std::isdigit(static_cast<unsigned char>(value[end]))) ++end;
    if (end == digits || end >= value.size() || value[end] != 'Q') return std::nullopt;
    size_t slot = std::stoul(value.substr(digits, end - digits));
    if (slot >= slots) return std::nullopt;
    out.push_back({"", static_cast<int>(slot)});
    at = end + 1;
  }
  if (at < value.size()) out.push_back({value.substr(at)});
  return out;
}

// Whether every cell's variables are ones its own reading takes as they are:
// not refused (the 128 KiB of one variable, a PATH replaced), and no value
// put into NAME that holds $NAME.
bool cells_read_alike(const CellTable& table, const Grid& grid, size_t resolved_variables) {
  for (const GridCell& cell : grid.cells) {
    std::optional<std::vector<std::string>> slots = cell_slots(grid, cell);
    if (!slots) return false;
    for (size_t i = 0; i < resolved_variables; ++i) {
      const auto& [name, pieces] = table.variables[i];
      if (pieces.size() == 1 && pieces[0].slot < 0) continue;
      std::string value;
      for (const auto& p : pieces) {
        if (p.slot < 0) {
          value += p.text;
          continue;
        }
        if (refers_to_itself(name, (*slots)[p.slot])) return false;
        value += (*slots)[p.slot];
      }
      if (script_value_problem(value) || env_value_problem(name, value)) return false;
    }
  }
  return true;
}

// The shared run with the tokens for every slot, its cells' variables
// appended as grid_scripts.hpp's plan appends a cell's; nullopt when it is
// not a table (resolve_grid.hpp).
std::optional<ResolvedGrid> table_grid(const YamlDocument& doc, Grid& grid, const TemplateSet& templates) {
  const size_t keys = grid.keys.size();
  GridCell tokens;
  tokens.name = token(keys);
  tokens.dir_name = token(keys + 1);
  for (size_t j = 0; j < keys; ++j) {
    GridValue v;
    v.key = grid.keys[j].path;
    v.text = token(j);
    v.node = YAML::Node(v.text);
    tokens.values.push_back(v);
  }
  const CellDocuments documents(doc);
  ResolvedRun run;
  std::optional<ClusterProfile> profile;
  try {
    RunSpec spec = parse_run_spec_document(documents.of(grid, tokens));
    profile = load_cluster_profile(find_cluster_profile(spec.cluster, spec.file, spec.where_of("cluster")));
    run = resolve_run(std::move(spec), *profile);
  } catch (const UserError&) {
    return std::nullopt;  // read cell by cell, each cell's problems are said as they are
  }
  if (run.shapes.size() != 1) return std::nullopt;
  const size_t resolved_variables = run.env.size();
  for (auto& [name, value] : cell_environment(grid, tokens)) run.env.emplace_back(name, value);
  run.env.emplace_back("DDPCTL_CELL_DIR", token(keys + 2));
  run.env.emplace_back("DDPCTL_CHECKPOINT_DIR", token(keys + 3));
  auto table = std::make_shared<CellTable>();
  for (const auto& [name, value] : run.env) {
    auto pieces = pieces_of(value, keys + 4);
    if (!pieces) return std::nullopt;
    table->variables.emplace_back(name, std::move(*pieces));
  }
  if (!cells_read_alike(*table, grid, resolved_variables)) return std::nullopt;

  // Nothing but env: may hold a token: the script is every cell's.
  ScriptRenderer renderer(templates);
  ResolvedRun shared = run;
  shared.env_table = shell_quote("cells/cell.env");
  for (const RenderedScript& rs : renderer.render(shared))
    if (rs.text.find(kTokenMark) != std::string::npos) return std::nullopt;
  // The first and the last cell, read, resolved and rendered alone, as
  // their own scripts would be: the same as the shared run's with their
  // variables.
  for (size_t c : {size_t{0}, grid.cells.size() - 1}) {
    const GridCell& cell = grid.cells[c];
    const std::string dir = "/ddpctl-grid-check/" + cell.dir_name;
    ResolvedRun own;
    try {
      own = resolve_run(parse_run_spec_document(documents.of(grid, cell)), *profile);
    } catch (const UserError&) {
      return std::nullopt;
    }
    for (auto& [name, value] : cell_environment(grid, cell)) own.env.emplace_back(name, value);
    own.env.emplace_back("DDPCTL_CELL_DIR", dir);
    set_checkpoint_folder(own, dir);
    ResolvedRun from_table = run;
    from_table.env = table->env_of(run, grid, cell, dir);
    if (renderer.render(own).at(0).text != renderer.render(from_table).at(0).text) return std::nullopt;
  }
  ResolvedGrid out;
  out.cells.push_back(std::move(run));
  out.grid = std::move(grid);
  out.table = std::move(table);
  return out;
}

}  // namespace

ResolvedGrid load_and_resolve_grid(const std::string& spec_path, const std::vector<std::string>& overrides,
                                   const std::string& site) {
  if (auto problem = script_value_problem(spec_path))
    throw UserError(Location{printable(spec_path)}, "", "the spec's path " + *problem);
  ResolvedGrid out;
  out.text = read_file(spec_path);
  YamlDocument doc = parse_yaml_document(spec_path, out.text, "run spec");
  apply_overrides(doc, overrides);
  std::optional<Grid> grid = read_grid(doc);
  if (!grid)
    throw UserError(Location{spec_path}, "grid",
                    "this spec has no `grid:` (e.g. `grid: {trainer.lr: [0.1, 0.01], trainer.seed: [1, 2]}`); "
                    "`ddpctl submit` runs it");
  out.grid = std::move(*grid);
  // Every cell is read and checked as a spec of its own. A problem every
  // cell has is the spec's, said once; one that only some cells have names them.
  std::optional<ClusterProfile> profile;
  std::vector<std::pair<std::string, Diagnostic>> problems;  // cell name, problem
  const CellDocuments documents(doc);
  out.cells.reserve(out.grid.cells.size());
  for (const GridCell& cell : out.grid.cells) {
    try {
      RunSpec spec = parse_run_spec_document(documents.of(out.grid, cell), site);
      if (!profile)
        profile = load_cluster_profile(find_cluster_profile(spec.cluster, spec.file, spec.where_of("cluster")));
      out.cells.push_back(resolve_run(std::move(spec), *profile));
    } catch (const UserError& e) {
      for (const Diagnostic& d : e.diagnostics()) problems.emplace_back(cell.name, d);
    }
  }
  if (problems.empty()) return out;
  std::vector<Diagnostic> said;
  std::map<std::string, std::vector<std::string>> cells_of;  // problem text -> the cells that have it
  for (const auto& [cell, d] : problems) {
    auto& cells = cells_of[d.str()];
    if (cells.empty()) said.push_back(d);
    cells.push_back(cell);
  }
  for (Diagnostic& d : said) {
    const auto& cells = cells_of[d.str()];
    if (cells.size() == out.grid.cells.size() && out.grid.cells.size() > 1) continue;
    d.message += cells.size() == 1 ? fmt::format(" (cell {})", cells[0])
                                   : fmt::format(" (cells {}{})", join({cells.begin(), cells.begin() + std::min<size_t>(cells.size(), 3)}, "; "),
                                                 cells.size() > 3 ? fmt::format(" and {} more", cells.size() - 3) : "");
  }
  throw UserError(said);
}

EnvList CellTable::env_of(const ResolvedRun& shared, const Grid& grid, const GridCell& cell,
                          const std::string& cell_dir, std::string* chosen_checkpoint) const {
  std::optional<std::vector<std::string>> slots = cell_slots(grid, cell);
  if (!slots) throw std::logic_error("grid table: cell " + cell.name + " has no value of every key");
  bool chosen = false;
  slots->push_back(cell_dir);
  slots->push_back(checkpoint_folder(shared, cell_dir, &chosen));
  if (chosen_checkpoint) *chosen_checkpoint = chosen ? slots->back() : "";
  EnvList env;
  env.reserve(variables.size());
  for (const auto& [name, pieces] : variables) {
    std::string value;
    for (const auto& p : pieces) value += p.slot < 0 ? p.text : (*slots)[p.slot];
    env.emplace_back(name, std::move(value));
  }
  return env;
}

ResolvedGrid load_grid(const std::string& spec_path, const std::vector<std::string>& overrides,
                       const std::string& templates_dir, const std::string& site) {
  // Whatever is not a table is read as every grid is, problems and all; so
  // is one site's part of a grid raced across sites (its first cell races).
  if (script_value_problem(spec_path) || !site.empty()) return load_and_resolve_grid(spec_path, overrides, site);
  std::string text = read_file(spec_path);
  YamlDocument doc = parse_yaml_document(spec_path, text, "run spec");
  apply_overrides(doc, overrides);
  std::optional<Grid> grid = read_grid(doc);
  if (!grid || grid->cells.size() <= kTableFromCells) return load_and_resolve_grid(spec_path, overrides);
  bool table = text.find(kTokenMark) == std::string::npos;
  for (const auto& k : grid->keys) table = table && k.path.rfind("env.", 0) == 0;
  for (const auto& o : overrides) table = table && o.find(kTokenMark) == std::string::npos;
  std::optional<ResolvedGrid> out;
  if (table) {
    TemplateSet templates;
    try {
      const std::string bundled = data_dir() + "/templates";
      templates = load_templates(templates_dir.empty() ? bundled : templates_dir, bundled);
    } catch (const UserError&) {
      return load_and_resolve_grid(spec_path, overrides);  // said when the scripts are rendered
    }
    out = table_grid(doc, *grid, templates);
  }
  if (!out) return load_and_resolve_grid(spec_path, overrides);
  out->text = std::move(text);
  return std::move(*out);
}

}  // namespace ddpctl
