#include "explain/parameter_report.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>
#include <set>

#include "base/diagnostics.hpp"
#include "spec/metric_pattern.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace {

// What the bundled trainer's last epoch line gives, in the order shown.
const std::vector<std::string>& trainer_metrics() {
  static const std::vector<std::string> names = {"val_loss", "val_acc", "train_loss", "train_acc", "img_per_s"};
  return names;
}


// 'a', 'b', 'c'
std::string listed(const std::vector<std::string>& items) {
  std::vector<std::string> q;
  for (const auto& i : items) q.push_back("'" + i + "'");
  return join(q, ", ");
}

bool better(double a, double b, bool maximize) { return maximize ? a > b : a < b; }

}  // namespace

std::string shown_value(double v) {
  double a = std::fabs(v);
  if (a >= 1000) return fmt::format("{:.1f}", v);
  if (a != 0 && a < 1e-3) return fmt::format("{:.3e}", v);
  return fmt::format("{:.4g}", v);
}

std::string shown_stat(const MetricStat& s) {
  return s.std ? fmt::format("{} ± {}", shown_value(s.mean), shown_value(*s.std)) : shown_value(s.mean);
}

std::string exact_value(double v) { return fmt::format("{:.10g}", v); }

std::string values_name(const GridReport& r, const std::vector<std::string>& values, const std::vector<size_t>& which) {
  std::vector<std::string> parts;
  for (size_t k : which)
    if (!values[k].empty()) parts.push_back(r.keys[k] + "=" + values[k]);
  return join(parts, ",");
}

std::vector<size_t> keys_but(const GridReport& r, std::optional<size_t> skip) {
  std::vector<size_t> out;
  for (size_t k = 0; k < r.keys.size(); ++k)
    if (!skip || k != *skip) out.push_back(k);
  return out;
}

BestBy parse_best(const std::string& text) {
  auto colon = text.rfind(':');
  std::string metric = colon == std::string::npos ? text : text.substr(0, colon);
  std::string dir = colon == std::string::npos ? "" : lower(text.substr(colon + 1));
  if (metric.empty() || (dir != "min" && dir != "max"))
    throw UserError(Location{"--best"}, "",
                    fmt::format("{}: write METRIC:min or METRIC:max (e.g. val_loss:min, val_acc:max)", printable(text)));
  return {metric, dir == "max"};
}

MetricStat metric_stat(const std::vector<double>& values) {
  MetricStat s;
  s.n = static_cast<int>(values.size());
  if (values.empty()) return s;
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(values.size());
  if (values.size() > 1) {
    double sq = 0;
    for (double v : values) sq += (v - s.mean) * (v - s.mean);
    s.std = std::sqrt(sq / static_cast<double>(values.size() - 1));
  }
  return s;
}

std::optional<size_t> seed_key_of(const RunGrid& grid, const std::optional<std::string>& option) {
  if (option) {
    if (option->empty() || *option == "none") return std::nullopt;
    std::vector<std::string> names;
    for (size_t k = 0; k < grid.keys.size(); ++k) {
      if (grid.keys[k].first == *option || grid.keys[k].second == *option) return k;
      names.push_back(grid.keys[k].second);
    }
    throw UserError(Location{"--seed-key"}, "",
                    fmt::format("{}: the grid has no such key; its keys are {}{}", printable(*option),
                                listed(names), did_you_mean(*option, names)));
  }
  for (size_t k = 0; k < grid.keys.size(); ++k) {
    std::string path = lower(grid.keys[k].first);
    std::string last = path.substr(path.rfind('.') == std::string::npos ? 0 : path.rfind('.') + 1);
    if (last.size() >= 4 && last.compare(last.size() - 4, 4, "seed") == 0) return k;
  }
  return std::nullopt;
}

namespace {

// The spec's metric: names first (known before any cell matched), then the
// trainer's in its order, then any other a cell has.
std::vector<std::string> metrics_in_order(const Run& run, const std::vector<GridCellRow>& cells) {
  std::vector<std::string> metrics;
  for (const auto& s : run.shapes)
    if (s.metric)
      for (const auto& n : metric_names(*s.metric))
        if (std::find(metrics.begin(), metrics.end(), n) == metrics.end()) metrics.push_back(n);
  std::set<std::string> seen;
  for (const auto& c : cells)
    for (const auto& [name, v] : c.metrics) seen.insert(name);
  for (const auto& n : trainer_metrics())
    if (seen.count(n) && std::find(metrics.begin(), metrics.end(), n) == metrics.end()) metrics.push_back(n);
  for (const auto& n : seen)
    if (std::find(metrics.begin(), metrics.end(), n) == metrics.end()) metrics.push_back(n);
  return metrics;
}

// r.groups: the cells that share every value but the seed key's, in the
// grid's order, with each metric's mean ± std over their COMPLETED cells.
void group_by_seed(GridReport& r) {
  std::map<std::vector<std::string>, size_t> group_of;
  for (size_t i = 0; i < r.cells.size(); ++i) {
    std::vector<std::string> values = r.cells[i].values;
    values.resize(r.keys.size());
    values[*r.seed_key] = "";
    auto [it, fresh] = group_of.emplace(values, r.groups.size());
    if (fresh) r.groups.push_back({values, {}, 0, {}, false});
    GridGroupRow& g = r.groups[it->second];
    g.cells.push_back(i);
    if (r.cells[i].completed) ++g.completed;
  }
  for (auto& g : r.groups)
    for (const auto& m : r.metrics) {
      std::vector<double> v;
      for (size_t i : g.cells)
        if (r.cells[i].completed)
          if (auto it = r.cells[i].metrics.find(m); it != r.cells[i].metrics.end()) v.push_back(it->second);
      if (!v.empty()) g.metrics[m] = metric_stat(v);
    }
}

// The COMPLETED cell with the best value of b.metric (the first of equals).
std::optional<size_t> best_cell_of(const GridReport& r, const BestBy& b) {
  std::optional<size_t> best_cell;
  for (size_t i = 0; i < r.cells.size(); ++i) {
    const auto& c = r.cells[i];
    auto it = c.metrics.find(b.metric);
    if (!c.completed || it == c.metrics.end()) continue;
    if (!best_cell || better(it->second, r.cells[*best_cell].metrics.at(b.metric), b.maximize)) best_cell = i;
  }
  return best_cell;
}

// The group with the best mean of b.metric (the first of equals).
std::optional<size_t> best_group_of(const GridReport& r, const BestBy& b) {
  std::optional<size_t> best_group;
  for (size_t i = 0; i < r.groups.size(); ++i) {
    auto it = r.groups[i].metrics.find(b.metric);
    if (it == r.groups[i].metrics.end()) continue;
    if (!best_group || better(it->second.mean, r.groups[*best_group].metrics.at(b.metric).mean, b.maximize))
      best_group = i;
  }
  return best_group;
}

// Marks the best cell, and the best group with a seed key, and says which in
// r.best_line. A metric no cell has is a UserError at --best.
void mark_best(GridReport& r, const BestBy& b) {
  if (std::find(r.metrics.begin(), r.metrics.end(), b.metric) == r.metrics.end())
    throw UserError(Location{"--best"}, "",
                    r.metrics.empty()
                        ? fmt::format("{}: no cell has metrics yet (the bundled trainer's metrics file, or the "
                                      "spec's metric: patterns over the log)",
                                      printable(b.metric))
                        : fmt::format("{}: no cell has this metric; the metrics found are {}{}", printable(b.metric),
                                      listed(r.metrics), did_you_mean(b.metric, r.metrics)));
  r.best = b;
  std::string dir = b.maximize ? "max" : "min";
  std::optional<size_t> best_cell = best_cell_of(r, b);
  if (best_cell) r.cells[*best_cell].best = true;
  if (r.seed_key) {
    if (std::optional<size_t> best_group = best_group_of(r, b)) {
      GridGroupRow& g = r.groups[*best_group];
      g.best = true;
      const MetricStat& s = g.metrics.at(b.metric);
      r.best_line = fmt::format("best by {} ({}): {}: {} {} over {} seed{} (mean ± std)", b.metric, dir,
                                values_name(r, g.values, keys_but(r, r.seed_key)), b.metric, shown_stat(s), s.n,
                                s.n == 1 ? "" : "s");
    }
  } else if (best_cell) {
    const auto& c = r.cells[*best_cell];
    r.best_line = fmt::format("best by {} ({}): cell {} (task {}): {} {}", b.metric, dir, c.name, c.task, b.metric,
                              shown_value(c.metrics.at(b.metric)));
  }
  if (r.best_line.empty())
    r.best_line = fmt::format("best by {} ({}): no COMPLETED cell has {} yet", b.metric, dir, b.metric);
}

}  // namespace

GridReport make_grid_report(const Run& run, std::vector<GridCellRow> cells, const GridReportOptions& options) {
  GridReport r;
  r.run_id = run.id;
  if (run.grid)
    for (const auto& [path, name] : run.grid->keys) r.key_paths.push_back(path), r.keys.push_back(name);
  r.cells = std::move(cells);
  r.metrics = metrics_in_order(run, r.cells);
  if (run.grid) r.seed_key = seed_key_of(*run.grid, options.seed_key);
  if (r.seed_key && r.keys.size() < 2) r.seed_key.reset();  // nothing to group by
  if (r.seed_key) group_by_seed(r);
  if (options.best) mark_best(r, *options.best);
  return r;
}

}  // namespace ddpctl
