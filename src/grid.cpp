#include "grid.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <map>
#include <set>

#include "overrides.hpp"
#include "text.hpp"
#include "values.hpp"

namespace ddpctl {

namespace {

// Fields a grid cannot vary: they name the sweep itself, or are the grid.
const std::set<std::string> kNotGridKeys = {"name",    "cluster", "output_dir", "alternatives", "sweep",
                                            "grid",    "include", "exclude",    "max_parallel"};

std::string value_text(const YAML::Node& node) {
  if (node.IsScalar()) return node.Scalar();
  YAML::Emitter e;
  e << YAML::Flow << node;
  return e.c_str();
}

std::string last_segment(const std::string& path) {
  size_t cut = path.find_last_of(".]");
  if (cut == std::string::npos) return path;
  std::string tail = path.substr(cut + 1);
  return tail.empty() ? path : tail;
}

bool is_placeholder_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

// One folder name: the characters a shell and a file system take as they are.
std::string safe_dir_name(const std::string& name) {
  std::string out;
  for (char c : name)
    out += (std::isalnum(static_cast<unsigned char>(c)) || std::strchr("._,=+-", c)) ? c : '_';
  if (out.size() > 120) {
    unsigned long long h = 1469598103934665603ULL;  // FNV-1a of the whole name keeps cut names apart
    for (unsigned char c : name) h = (h ^ c) * 1099511628211ULL;
    out = fmt::format("{}-{:08x}", out.substr(0, 100), h & 0xffffffffULL);
  }
  if (out.empty() || out[0] == '.' || out[0] == '-') out = "cell" + out;
  return out;
}

struct Reader {
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
    if (kNotGridKeys.count(root)) {
      diags.error(at(where_field, key_node), where_field + "." + *path,
                  fmt::format("a grid cannot vary `{}`: it names the sweep itself (a grid varies the run's fields: "
                              "trainer.lr, env.LR, nodes, ...)",
                              root));
      return std::nullopt;
    }
    return path;
  }
};

bool matches(const GridCell& cell, const std::vector<GridValue>& partial) {
  for (const auto& v : partial)
    if (cell.value_of(v.key) != v.text) return false;
  return true;
}

void set_value(GridCell& cell, const GridValue& v) {
  for (auto& mine : cell.values)
    if (mine.key == v.key) {
      mine = v;
      return;
    }
  cell.values.push_back(v);
}

// A partial cell of include: or exclude:, its keys normalized.
struct Partial {
  std::vector<GridValue> values;
  Location where;
};

std::vector<Partial> read_partials(Reader& r, const char* field) {
  std::vector<Partial> out;
  YAML::Node list = r.doc.root[field];
  if (!list.IsDefined() || list.IsNull()) return out;
  if (!list.IsSequence() || list.size() == 0) {
    r.diags.error(r.at(field, list), field,
                  fmt::format("expected a non-empty list of partial cells (e.g. `- {{trainer.lr: 0.1, trainer.seed: "
                              "1}}`), got {}",
                              describe_node(list)));
    return out;
  }
  for (size_t i = 0; i < list.size(); ++i) {
    std::string f = fmt::format("{}[{}]", field, i);
    YAML::Node entry = list[i];
    if (!entry.IsMap() || entry.size() == 0) {
      r.diags.error(r.at(f, entry), f, fmt::format("expected a mapping of field paths to values, got {}", describe_node(entry)));
      continue;
    }
    Partial p;
    p.where = r.at(f, entry);
    for (auto it = entry.begin(); it != entry.end(); ++it) {
      auto path = r.key(it->first, f);
      if (!path) continue;
      if (!it->second.IsDefined() || it->second.IsNull()) {
        r.diags.error(r.at(f + "." + *path, it->second), f + "." + *path, "needs a value");
        continue;
      }
      p.values.push_back({*path, value_text(it->second), it->second, it->first.Scalar(), -1, static_cast<int>(i)});
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

std::string GridCell::value_of(const std::string& key_path) const {
  for (const auto& v : values)
    if (v.key == key_path) return v.text;
  return "";
}

const std::vector<std::string>& grid_fields() {
  static const std::vector<std::string> fields = {"grid", "include", "exclude", "max_parallel"};
  return fields;
}

std::optional<Grid> read_grid(const YamlDocument& doc) {
  const YAML::Node& root = doc.root;
  bool has_grid = root["grid"].IsDefined() && !root["grid"].IsNull();
  bool has_include = root["include"].IsDefined() && !root["include"].IsNull();
  if (!has_grid && !has_include) {
    for (const char* f : {"exclude", "max_parallel"})
      if (root[f].IsDefined() && !root[f].IsNull())
        throw UserError(doc.locate(f, root[f]), f, fmt::format("`{}` needs a `grid:` (or `include:`) beside it", f));
    return std::nullopt;
  }
  Reader r{doc, {}};
  Grid grid;
  grid.where = has_grid ? doc.locate("grid", root["grid"]) : doc.locate("include", root["include"]);

  // grid: the keys and their lists, in file order.
  std::vector<std::vector<GridValue>> axes;
  if (has_grid) {
    YAML::Node g = root["grid"];
    if (!g.IsMap() || g.size() == 0) {
      r.diags.error(r.at("grid", g), "grid",
                    fmt::format("expected a mapping of field paths to lists of values (e.g. `trainer.lr: [0.1, 0.01]`), "
                                "got {}",
                                describe_node(g)));
    } else {
      for (auto it = g.begin(); it != g.end(); ++it) {
        auto path = r.key(it->first, "grid");
        if (!path) continue;
        std::string f = "grid." + *path;
        YAML::Node list = it->second;
        if (!list.IsSequence() || list.size() == 0) {
          r.diags.error(r.at(f, list), f, fmt::format("expected a non-empty list of values, got {}", describe_node(list)));
          continue;
        }
        if (std::any_of(grid.keys.begin(), grid.keys.end(), [&](const GridKey& k) { return k.path == *path; })) {
          r.diags.error(r.at(f, list), f, "this field is in the grid twice");
          continue;
        }
        std::vector<GridValue> axis;
        std::set<std::string> seen;
        for (size_t j = 0; j < list.size(); ++j) {
          YAML::Node v = list[j];
          std::string vf = fmt::format("{}[{}]", f, j);
          if (!v.IsDefined() || v.IsNull()) {
            r.diags.error(r.at(vf, v), vf, "a grid value cannot be empty");
            continue;
          }
          GridValue gv{*path, value_text(v), v, it->first.Scalar(), static_cast<int>(j), -1};
          if (!seen.insert(gv.text).second) {
            r.diags.error(r.at(vf, v), vf, fmt::format("{} is in this list twice", printable(gv.text)));
            continue;
          }
          axis.push_back(gv);
        }
        grid.keys.push_back({*path, "", r.at(f, it->first)});
        axes.push_back(std::move(axis));
      }
    }
  }
  std::vector<Partial> excludes = read_partials(r, "exclude");
  std::vector<Partial> includes = read_partials(r, "include");
  if (root["max_parallel"].IsDefined() && !root["max_parallel"].IsNull()) {
    std::string problem;
    YAML::Node m = root["max_parallel"];
    auto v = m.IsScalar() ? parse_int(m.Scalar(), 1, 100000, &problem) : std::nullopt;
    if (!v)
      r.diags.error(r.at("max_parallel", m), "max_parallel",
                    "expected a whole number of cells allowed to run at once, 1 to 100000 (the array's %K)");
    else
      grid.max_parallel = static_cast<int>(*v);
  }
  r.diags.throw_if_any();

  // The product, first key slowest; refused before it is built when too large.
  size_t total = axes.empty() ? 0 : 1;
  for (const auto& a : axes) {
    if (total > kMaxCells / std::max<size_t>(1, a.size())) {
      throw UserError(grid.where, "grid", fmt::format("the grid has more than {} cells", kMaxCells));
    }
    total *= a.size();
  }
  std::vector<GridCell> product;
  for (size_t n = 0; n < total; ++n) {
    GridCell cell;
    size_t rest = n;
    std::vector<size_t> pick(axes.size());
    for (size_t k = axes.size(); k-- > 0;) {
      pick[k] = rest % axes[k].size();
      rest /= axes[k].size();
    }
    for (size_t k = 0; k < axes.size(); ++k) cell.values.push_back(axes[k][pick[k]]);
    product.push_back(std::move(cell));
  }

  // exclude: first; an entry that matches no cell is a typo, said so.
  for (size_t i = 0; i < excludes.size(); ++i) {
    const Partial& ex = excludes[i];
    std::string f = fmt::format("exclude[{}]", i);
    bool bad = false;
    for (const auto& v : ex.values)
      if (std::none_of(grid.keys.begin(), grid.keys.end(), [&](const GridKey& k) { return k.path == v.key; })) {
        r.diags.error(ex.where, f + "." + v.key, "is not a key of grid:; exclude: names the grid's own keys");
        bad = true;
      }
    if (bad) continue;
    size_t before = product.size();
    product.erase(std::remove_if(product.begin(), product.end(), [&](const GridCell& c) { return matches(c, ex.values); }),
                  product.end());
    if (product.size() == before) r.diags.error(ex.where, f, "matches no cell of the grid");
  }
  r.diags.throw_if_any();

  // include: extends the grid's cells it matches on the grid's keys (the
  // cells of the product, not those earlier entries added), else is a cell.
  std::vector<GridCell> added;
  std::vector<std::string> extra_keys;
  for (const Partial& in : includes) {
    std::vector<GridValue> on_grid, extra;
    for (const auto& v : in.values) {
      bool is_grid_key = std::any_of(grid.keys.begin(), grid.keys.end(), [&](const GridKey& k) { return k.path == v.key; });
      (is_grid_key ? on_grid : extra).push_back(v);
      if (!is_grid_key && std::find(extra_keys.begin(), extra_keys.end(), v.key) == extra_keys.end())
        extra_keys.push_back(v.key);
    }
    bool any = false;
    if (!product.empty())
      for (auto& cell : product)
        if (matches(cell, on_grid)) {
          any = true;
          for (const auto& v : extra) set_value(cell, v);
        }
    if (!any) {
      GridCell cell;
      cell.values = in.values;
      added.push_back(std::move(cell));
    }
  }
  for (const auto& k : extra_keys) {
    // Its place: the first include: entry that sets it.
    Location where = grid.where;
    for (const Partial& in : includes)
      for (const auto& v : in.values)
        if (v.key == k && where.line == grid.where.line) where = in.where;
    grid.keys.push_back({k, "", where});
  }
  for (auto& c : added) product.push_back(std::move(c));

  // Names: the last part of each path, or the whole path where two keys end alike.
  std::map<std::string, int> ends;
  for (const auto& k : grid.keys) ++ends[last_segment(k.path)];
  for (auto& k : grid.keys) k.name = ends[last_segment(k.path)] > 1 ? k.path : last_segment(k.path);
  std::map<std::string, int> names, dirs;
  for (size_t i = 0; i < product.size(); ++i) {
    GridCell& cell = product[i];
    cell.index = static_cast<int>(i);
    // Values in the grid's key order.
    std::vector<GridValue> ordered;
    for (const auto& k : grid.keys)
      for (const auto& v : cell.values)
        if (v.key == k.path) ordered.push_back(v);
    cell.values = std::move(ordered);
    std::vector<std::string> parts;
    for (const auto& v : cell.values) {
      const std::string& name =
          std::find_if(grid.keys.begin(), grid.keys.end(), [&](const GridKey& k) { return k.path == v.key; })->name;
      parts.push_back(name + "=" + v.text);
    }
    cell.name = join(parts, ",");
    if (names.count(cell.name))
      r.diags.error(grid.where, "include",
                    fmt::format("two cells are both {} (cells {} and {}): include: repeats a cell", printable(cell.name, 200),
                                names[cell.name], i));
    names[cell.name] = static_cast<int>(i);
    cell.dir_name = safe_dir_name(cell.name);
    if (int n = dirs[cell.dir_name]++; n > 0) cell.dir_name += fmt::format("-{}", i);
  }
  if (product.size() > kMaxCells)
    r.diags.error(grid.where, "grid", fmt::format("the grid has {} cells, more than {}", product.size(), kMaxCells));
  if (product.empty()) r.diags.error(grid.where, "grid", "every cell of the grid is excluded");
  r.diags.throw_if_any();
  grid.cells = std::move(product);
  return grid;
}

std::optional<std::string> replace_placeholders(const std::string& text, const Grid& grid, const GridCell& cell,
                                                std::string* problem) {
  std::string out;
  bool changed = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      out += c;
      ++i;
      changed = true;
      continue;
    }
    if (c != '{' || (i > 0 && text[i - 1] == '$')) {
      out += c;
      continue;
    }
    size_t close = i + 1;
    while (close < text.size() && is_placeholder_char(text[close])) ++close;
    if (close == i + 1 || close >= text.size() || text[close] != '}') {
      out += c;  // not a placeholder: JSON, awk, a lone brace
      continue;
    }
    std::string name = text.substr(i + 1, close - i - 1);
    std::optional<std::string> value;
    if (name == "cell") value = cell.name;
    for (const auto& k : grid.keys)
      if (k.name == name || k.path == name) value = cell.value_of(k.path);
    if (!value) {
      std::vector<std::string> known{"cell"};
      for (const auto& k : grid.keys) known.push_back(k.name);
      *problem = fmt::format("{{{}}} names no key of the grid{}; placeholders: {}", name, did_you_mean(name, known),
                             join(known, ", "));
      return std::nullopt;
    }
    out += *value;
    changed = true;
    i = close;
  }
  if (!changed) return std::nullopt;
  return out;
}

YamlDocument cell_document(const std::string& file, const std::string& text, const std::vector<std::string>& overrides,
                           const Grid& grid, const GridCell& cell) {
  YamlDocument out = parse_yaml_document(file, text, "run spec");
  apply_overrides(out, overrides);
  const YamlDocument& doc = out;
  // The cell's values, as the grid wrote them (their lines stay theirs).
  std::vector<std::pair<std::string, YAML::Node>> values;
  for (const auto& v : cell.values) {
    YAML::Node node = v.include_entry >= 0 ? out.root["include"][static_cast<size_t>(v.include_entry)][v.raw_key]
                                           : out.root["grid"][v.raw_key][static_cast<size_t>(v.index)];
    values.emplace_back(v.key, node);
  }
  for (const auto& f : grid_fields()) out.root.remove(f);
  for (const auto& [key, node] : values)
    if (auto problem = set_field_path(out.root, key, node))
      throw UserError(grid.where, key, fmt::format("cell {}: {}", cell.name, *problem));

  Diagnostics diags;
  auto replace = [&](YAML::Node node, const std::string& field) {
    if (!node.IsScalar()) return;
    std::string problem;
    auto replaced = replace_placeholders(node.Scalar(), grid, cell, &problem);
    if (!problem.empty())
      diags.error(doc.locate(field, node), field, problem);
    else if (replaced)
      node = *replaced;  // in place: the scalar keeps its line
  };
  YAML::Node root = out.root;
  if (YAML::Node command = root["command"]; command.IsDefined()) {
    if (command.IsSequence())
      for (size_t i = 0; i < command.size(); ++i) replace(command[i], fmt::format("command[{}]", i));
    else
      replace(command, "command");
  }
  if (YAML::Node trainer = root["trainer"]; trainer.IsMap()) {
    if (YAML::Node extra = trainer["extra_args"]; extra.IsSequence())
      for (size_t i = 0; i < extra.size(); ++i) replace(extra[i], fmt::format("trainer.extra_args[{}]", i));
    if (YAML::Node dir = trainer["checkpoint_dir"]; dir.IsScalar()) {
      std::string before = dir.Scalar();
      replace(dir, "trainer.checkpoint_dir");
      // No placeholder: each cell its own checkpoint folder.
      if (dir.Scalar() == before && !before.empty())
        dir = before + (before.back() == '/' ? "" : "/") + cell.dir_name;
    }
  }
  if (YAML::Node env = root["env"]; env.IsMap())
    for (auto it = env.begin(); it != env.end(); ++it)
      replace(it->second, "env." + (it->first.IsScalar() ? it->first.Scalar() : std::string("?")));
  diags.throw_if_any();
  return out;
}

std::vector<std::pair<std::string, std::string>> cell_environment(const Grid& grid, const GridCell& cell) {
  std::vector<std::pair<std::string, std::string>> env{{"DDPCTL_CELL", cell.name}};
  for (const auto& k : grid.keys) {
    std::string value = cell.value_of(k.path);
    bool set = std::any_of(cell.values.begin(), cell.values.end(), [&](const GridValue& v) { return v.key == k.path; });
    if (!set) continue;
    std::string name = "DDPCTL_GRID_";
    for (char c : k.name) name += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::toupper(c)) : '_';
    env.emplace_back(name, value);
  }
  return env;
}

}  // namespace ddpctl
