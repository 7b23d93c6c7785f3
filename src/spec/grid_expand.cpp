#include "spec/grid_expand.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fmt/format.h>
#include <map>
#include <set>
#include <unordered_map>

#include "base/text.hpp"

namespace ddpctl {

namespace {

// Linux's MAX_ARG_STRLEN: one environment string (NAME=value and its NUL).
constexpr size_t kMaxEnvString = 131072;

std::string last_segment(const std::string& path) {
  size_t cut = path.find_last_of(".]");
  if (cut == std::string::npos) return path;
  std::string tail = path.substr(cut + 1);
  return tail.empty() ? path : tail;
}

std::string variable_of(const std::string& name) {
  std::string out = "DDPCTL_GRID_";
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::toupper(c)) : '_';
  return out;
}

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

// The product, first key slowest; refused before it is built when too large.
std::vector<GridCell> product_of(const std::vector<std::vector<GridValue>>& axes, const Grid& grid) {
  size_t total = axes.empty() ? 0 : 1;
  for (const auto& a : axes) {
    if (total > kMaxCells / std::max<size_t>(1, a.size()))
      throw UserError(grid.where, "grid", fmt::format("the grid has more than {} cells", kMaxCells));
    total *= a.size();
  }
  std::vector<GridCell> product(total);
  std::vector<size_t> pick(axes.size());
  for (size_t n = 0; n < total; ++n) {
    size_t rest = n;
    for (size_t k = axes.size(); k-- > 0;) {
      pick[k] = rest % axes[k].size();
      rest /= axes[k].size();
    }
    product[n].values.reserve(axes.size());
    for (size_t k = 0; k < axes.size(); ++k) product[n].values.push_back(axes[k][pick[k]]);
  }
  return product;
}

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

bool is_grid_key(const Grid& grid, size_t axes, const std::string& path) {
  return std::any_of(grid.keys.begin(), grid.keys.begin() + static_cast<long>(axes),
                     [&](const GridKey& k) { return k.path == path; });
}

// exclude: first; an entry that matches no cell is a typo, said so.
void apply_excludes(Diagnostics& diags, const std::vector<GridPartial>& excludes, const Grid& grid, std::vector<GridCell>& product) {
  for (size_t i = 0; i < excludes.size(); ++i) {
    const GridPartial& ex = excludes[i];
    std::string f = fmt::format("grid.exclude[{}]", i);
    bool bad = false;
    for (const auto& v : ex.values)
      if (!is_grid_key(grid, grid.keys.size(), v.key)) {
        diags.error(ex.where, f + "." + v.key, "is not a key of the grid; grid.exclude names the grid's own keys");
        bad = true;
      }
    if (bad) continue;
    size_t before = product.size();
    product.erase(std::remove_if(product.begin(), product.end(), [&](const GridCell& c) { return matches(c, ex.values); }),
                  product.end());
    if (product.size() == before) diags.error(ex.where, f, "matches no cell of the grid");
  }
}

// The values of the first `axes` keys, in their order, as one lookup key.
std::string combination(const std::vector<GridValue>& values) {
  std::string out;
  for (const auto& v : values) out += v.text + '\0';
  return out;
}

// include: extends the grid's cells it matches on the grid's keys (the
// cells of the product, not those earlier entries added), else is a cell.
// An entry that names every grid key is looked up, not searched for.
void apply_includes(const std::vector<GridPartial>& includes, Grid& grid, std::vector<GridCell>& product) {
  const size_t axes = grid.keys.size();
  std::unordered_map<std::string, size_t> by_combination;
  for (size_t i = 0; i < product.size(); ++i) by_combination.emplace(combination(product[i].values), i);
  std::vector<GridCell> added;
  std::set<std::string> extra_seen;
  for (const GridPartial& in : includes) {
    std::vector<GridValue> on_grid, extra;
    for (const auto& v : in.values) {
      bool grid_key = is_grid_key(grid, axes, v.key);
      (grid_key ? on_grid : extra).push_back(v);
      if (!grid_key && extra_seen.insert(v.key).second) grid.keys.push_back({v.key, "", "", in.where});
    }
    bool any = false;
    if (on_grid.size() == axes && axes > 0) {
      std::vector<GridValue> ordered;
      for (size_t k = 0; k < axes; ++k)
        for (const auto& v : on_grid)
          if (v.key == grid.keys[k].path) ordered.push_back(v);
      if (auto it = by_combination.find(combination(ordered)); it != by_combination.end()) {
        any = true;
        for (const auto& v : extra) set_value(product[it->second], v);
      }
    } else if (axes > 0) {
      for (auto& cell : product)
        if (matches(cell, on_grid)) {
          any = true;
          for (const auto& v : extra) set_value(cell, v);
        }
    }
    if (!any) {
      GridCell cell;
      cell.values = in.values;
      added.push_back(std::move(cell));
    }
  }
  for (auto& c : added) product.push_back(std::move(c));
}

// Names: the last part of each path, or the whole path where two keys end
// alike or the last part is `cell` ({cell} is the cell's name).
void name_keys(Diagnostics& diags, Grid& grid) {
  std::map<std::string, int> ends;
  for (const auto& k : grid.keys) ++ends[last_segment(k.path)];
  std::map<std::string, const GridKey*> by_variable;
  for (auto& k : grid.keys) {
    std::string end = last_segment(k.path);
    k.name = ends[end] > 1 || end == "cell" ? k.path : end;
    k.variable = variable_of(k.name);
    auto [it, fresh] = by_variable.emplace(k.variable, &k);
    if (!fresh)
      diags.error(k.where, "grid." + k.path,
                    fmt::format("its variable {} would also be {}'s (the names differ only in case or in characters "
                                "other than letters and digits), and the cell's program could not tell them apart; "
                                "vary one of them",
                                k.variable, it->second->path));
  }
}

void name_cells(Diagnostics& diags, Grid& grid, std::vector<GridCell>& cells) {
  std::unordered_map<std::string, size_t> key_index;
  for (size_t k = 0; k < grid.keys.size(); ++k) key_index.emplace(grid.keys[k].path, k);
  std::unordered_map<std::string, int> names, dirs;
  std::vector<int> too_long;
  for (size_t i = 0; i < cells.size(); ++i) {
    GridCell& cell = cells[i];
    cell.index = static_cast<int>(i);
    // Values in the grid's key order.
    std::stable_sort(cell.values.begin(), cell.values.end(), [&](const GridValue& a, const GridValue& b) {
      return key_index.at(a.key) < key_index.at(b.key);
    });
    for (const auto& v : cell.values) {
      if (!cell.name.empty()) cell.name += ',';
      cell.name += grid.keys[key_index.at(v.key)].name + "=" + v.text;
    }
    if (auto [it, fresh] = names.emplace(cell.name, static_cast<int>(i)); !fresh)
      diags.error(grid.where, "grid.include",
                    fmt::format("two cells are both {} (cells {} and {}): include: repeats a cell",
                                printable(cell.name, 200), it->second, i));
    if (std::string("DDPCTL_CELL=").size() + cell.name.size() >= kMaxEnvString) too_long.push_back(static_cast<int>(i));
    cell.dir_name = safe_dir_name(cell.name);
    if (int n = dirs[cell.dir_name]++; n > 0) cell.dir_name += fmt::format("-{}", i);
  }
  if (!too_long.empty()) {
    const GridCell& first = cells[static_cast<size_t>(too_long[0])];
    diags.error(grid.where, "grid",
                  fmt::format("{} cell(s) have a name too long to pass (cell {}, {}: DDPCTL_CELL=<name> is {} bytes); "
                              "Linux passes at most 128 KiB ({} bytes) in one environment variable, and the job would "
                              "fail with \"Argument list too long\"; a cell's name joins its key=value pairs: shorten "
                              "the values",
                              too_long.size(), first.index, printable(first.name, 40),
                              std::string("DDPCTL_CELL=").size() + first.name.size(), kMaxEnvString - 1));
  }
}

// Each value as DDPCTL_GRID_<NAME>=value: under Linux's 128 KiB (a value
// over it alone was refused as it was read).
void check_value_sizes(const YamlDocument& doc, Diagnostics& diags, const Grid& grid, const GridSection& s) {
  auto check = [&](const GridValue& v) {
    auto k = std::find_if(grid.keys.begin(), grid.keys.end(), [&](const GridKey& g) { return g.path == v.key; });
    if (k == grid.keys.end() || v.text.size() >= kMaxEnvString) return;
    size_t bytes = k->variable.size() + 1 + v.text.size();
    if (bytes < kMaxEnvString) return;
    std::string f = v.index >= 0 ? fmt::format("grid.{}[{}]", v.key, v.index)
                                 : fmt::format("grid.include[{}].{}", v.include_entry, v.key);
    diags.error(doc.locate(f, v.node), f,
                  fmt::format("{}=<value> is {} bytes; Linux passes at most 128 KiB ({} bytes) in one environment "
                              "variable, and the job would fail with \"Argument list too long\"",
                              k->variable, bytes, kMaxEnvString - 1));
  };
  for (const auto& axis : s.axes)
    for (const auto& v : axis) check(v);
  for (const auto& p : s.includes)
    for (const auto& v : p.values) check(v);
}

}  // namespace

std::vector<GridCell> expand_grid(const YamlDocument& doc, const GridSection& section, Grid& grid) {
  Diagnostics diags;
  std::vector<GridCell> cells = product_of(section.axes, grid);
  apply_excludes(diags, section.excludes, grid, cells);
  diags.throw_if_any();
  apply_includes(section.includes, grid, cells);
  name_keys(diags, grid);
  diags.throw_if_any();
  name_cells(diags, grid, cells);
  check_value_sizes(doc, diags, grid, section);
  if (cells.size() > kMaxCells)
    diags.error(grid.where, "grid", fmt::format("the grid has {} cells, more than {}", cells.size(), kMaxCells));
  if (cells.empty()) diags.error(grid.where, "grid", "every cell of the grid is excluded");
  diags.throw_if_any();
  return cells;
}

}  // namespace ddpctl
