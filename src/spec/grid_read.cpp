#include "spec/grid_read.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <set>

#include "spec/grid_expand.hpp"
#include "base/overrides.hpp"
#include "base/shell.hpp"
#include "base/text.hpp"
#include "base/values.hpp"

namespace ddpctl {

namespace {

// Fields a grid cannot vary: they name the sweep itself, or are the grid's.
const std::set<std::string> kNamesTheSweep = {"name", "cluster", "output_dir", "alternatives", "sweep"};
const std::set<std::string> kGridsOwn = {"grid", "include", "max_parallel"};

std::string value_text(const YAML::Node& node) {
  if (node.IsScalar()) return node.Scalar();
  YAML::Emitter e;
  e << YAML::Flow << node;
  return e.c_str();
}

// "an empty mapping ({})" where describe_node would say "a mapping".
std::string described(const YAML::Node& node) {
  if (node.IsMap() && node.size() == 0) return "an empty mapping ({})";
  if (node.IsSequence() && node.size() == 0) return "an empty list ([])";
  return describe_node(node);
}

struct GridReader {
  const YamlDocument& doc;
  Diagnostics diags;

  Location at(const std::string& field, const YAML::Node& node) const { return doc.locate(field, node); }

  // A key of grid:, include: or exclude: -> its normalized path, or a problem.
  std::optional<std::string> key(const YAML::Node& key_node, const std::string& where_field) {
    std::string raw = key_node.IsScalar() ? key_node.Scalar() : "";
    auto path = normalize_field_path(raw);
    if (!path) {
      diags.error(at(where_field, key_node), where_field,
                  fmt::format("{} is not a field path (names joined by dots, as --set takes them: trainer.lr, env.LR, "
                              "nodes)",
                              printable(raw)));
      return std::nullopt;
    }
    std::string root = path->substr(0, path->find_first_of(".["));
    if (kNamesTheSweep.count(root) || kGridsOwn.count(root)) {
      diags.error(at(where_field, key_node), where_field + "." + *path,
                  fmt::format("a grid cannot vary `{}`: {} (a grid varies the run's fields: trainer.lr, env.LR, "
                              "nodes, ...)",
                              root, kGridsOwn.count(root) ? "it is the grid's own field" : "it names the sweep itself"));
      return std::nullopt;
    }
    return path;
  }

  // A grid value's problem, at its line: none, or a control character; for
  // `env.NAME`, a value holding $NAME, which env: reads as the variable's
  // earlier value (shell.hpp) and could not reach NAME as it is.
  bool value_ok(const YAML::Node& v, const std::string& field, const std::string& path) {
    if (!v.IsDefined() || v.IsNull()) {
      diags.error(at(field, v), field, "a grid value cannot be empty (write '' for an empty string)");
      return false;
    }
    if (auto problem = script_value_problem(value_text(v))) {
      diags.error(at(field, v), field, "a grid value " + *problem);
      return false;
    }
    if (path.rfind("env.", 0) == 0 && v.IsScalar() && refers_to_itself(path.substr(4), v.Scalar())) {
      diags.error(at(field, v), field,
                  fmt::format("the value {} holds ${}, which env: reads as {}'s earlier value, so it cannot reach "
                              "{} as it is; put the value in another variable",
                              printable(v.Scalar(), 60), path.substr(4), path.substr(4), path.substr(4)));
      return false;
    }
    return true;
  }
};

std::vector<GridPartial> read_partials(GridReader& r, const YAML::Node& list, const std::string& field) {
  std::vector<GridPartial> out;
  if (!list.IsSequence() || list.size() == 0) {
    r.diags.error(r.at(field, list), field,
                  fmt::format("expected a non-empty list of partial cells (e.g. `- {{trainer.lr: 0.1, trainer.seed: "
                              "1}}`), got {}",
                              described(list)));
    return out;
  }
  for (size_t i = 0; i < list.size(); ++i) {
    std::string f = fmt::format("{}[{}]", field, i);
    YAML::Node entry = list[i];
    if (!entry.IsMap() || entry.size() == 0) {
      r.diags.error(r.at(f, entry), f,
                    fmt::format("expected a mapping of field paths to values (a partial cell: `{{trainer.lr: 0.1}}`), "
                                "got {}",
                                described(entry)));
      continue;
    }
    GridPartial p;
    p.where = r.at(f, entry);
    for (auto it = entry.begin(); it != entry.end(); ++it) {
      auto path = r.key(it->first, f);
      if (!path || !r.value_ok(it->second, f + "." + *path, *path)) continue;
      p.values.push_back({*path, value_text(it->second), it->second, -1, static_cast<int>(i)});
    }
    out.push_back(std::move(p));
  }
  return out;
}

void read_axis(GridReader& r, const YAML::Node& key, const YAML::Node& list, Grid& grid, GridSection& s) {
  auto path = r.key(key, "grid");
  if (!path) return;
  std::string f = "grid." + *path;
  if (!list.IsSequence() || list.size() == 0) {
    r.diags.error(r.at(f, list), f, fmt::format("expected a non-empty list of values, got {}", described(list)));
    return;
  }
  if (std::any_of(grid.keys.begin(), grid.keys.end(), [&](const GridKey& k) { return k.path == *path; })) {
    r.diags.error(r.at(f, list), f, "this field is in the grid twice");
    return;
  }
  std::vector<GridValue> axis;
  std::set<std::string> seen;
  for (size_t j = 0; j < list.size(); ++j) {
    YAML::Node v = list[j];
    std::string vf = fmt::format("{}[{}]", f, j);
    if (!r.value_ok(v, vf, *path)) continue;
    GridValue gv{*path, value_text(v), v, static_cast<int>(j), -1};
    if (!seen.insert(gv.text).second) {
      r.diags.error(r.at(vf, v), vf, fmt::format("{} is in this list twice", printable(gv.text)));
      continue;
    }
    axis.push_back(gv);
  }
  grid.keys.push_back({*path, "", "", r.at(f, key)});
  s.axes.push_back(std::move(axis));
}

GridSection read_section(GridReader& r, const YAML::Node& g, Grid& grid) {
  GridSection s;
  if (!g.IsMap() || g.size() == 0) {
    r.diags.error(grid.where, "grid",
                  fmt::format("expected a mapping of field paths to lists of values (e.g. `trainer.lr: [0.1, 0.01]`), "
                              "got {}",
                              described(g)));
    return s;
  }
  for (auto it = g.begin(); it != g.end(); ++it) {
    std::string raw = it->first.IsScalar() ? it->first.Scalar() : "";
    if (raw == "exclude") {
      s.excludes = read_partials(r, it->second, "grid.exclude");
    } else if (raw == "include") {
      s.includes = read_partials(r, it->second, "grid.include");
    } else if (raw == "max_parallel") {
      std::string problem;
      const YAML::Node& m = it->second;
      auto v = m.IsScalar() ? parse_int(m.Scalar(), 1, 100000, &problem) : std::nullopt;
      if (!v)
        r.diags.error(r.at("grid.max_parallel", m), "grid.max_parallel",
                      "expected a whole number of cells allowed to run at once, 1 to 100000 (the array's %K)");
      else
        grid.max_parallel = static_cast<int>(*v);
    } else {
      read_axis(r, it->first, it->second, grid, s);
    }
  }
  if (s.axes.empty() && s.includes.empty() && r.diags.empty())
    r.diags.error(grid.where, "grid",
                  "varies nothing: give it field paths with lists of values (`trainer.lr: [0.1, 0.01]`) or an "
                  "`include:` list of cells");
  return s;
}

}  // namespace

std::optional<Grid> read_grid(const YamlDocument& doc) {
  YAML::Node g = doc.root["grid"];
  if (!g.IsDefined() || g.IsNull()) return std::nullopt;
  GridReader r{doc, {}};
  Grid grid;
  grid.where = doc.locate("grid", g);
  GridSection s = read_section(r, g, grid);
  r.diags.throw_if_any();
  grid.cells = expand_grid(doc, s, grid);
  return grid;
}

void refuse_old_grid_spelling(MapReader& top) {
  if (top.has("include"))
    top.error("include", "a grid's `include:` goes under `grid:` now, beside the keys it extends (grid: {include: "
                         "[...]}; docs/sweeps.md)");
  if (top.has("max_parallel"))
    top.error("max_parallel", "goes under `grid:` now (grid: {max_parallel: N}): it is how many of a grid's cells run "
                              "at once, and a spec without a grid has no cells to throttle");
}

}  // namespace ddpctl
