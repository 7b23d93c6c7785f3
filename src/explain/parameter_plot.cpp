#include "explain/parameter_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <map>

#include "base/diagnostics.hpp"
#include "base/text.hpp"
#include "explain/report_plot.hpp"

namespace ddpctl {

namespace {

// A string in a gnuplot data file: double quotes, none inside.
std::string data_word(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += c == '"' ? '\'' : c;
  return out + "\"";
}

std::optional<double> number_of(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

GridPlot grid_plot(const GridReport& r, const std::string& metric, size_t x, const std::string& data_file,
                   const std::string& out, const std::string& terminal) {
  // Averaged over the seeds unless the seed is the x axis.
  bool avg = r.seed_key && *r.seed_key != x;
  size_t avg_key = avg ? *r.seed_key : r.keys.size();
  std::vector<size_t> others;
  for (size_t k = 0; k < r.keys.size(); ++k)
    if (k != x && k != avg_key) others.push_back(k);
  // The x values in the grid's order, and whether they are all numbers.
  std::vector<std::string> xs;
  for (const auto& c : r.cells)
    if (x < c.values.size() && !c.values[x].empty() && std::find(xs.begin(), xs.end(), c.values[x]) == xs.end())
      xs.push_back(c.values[x]);
  bool numeric = !xs.empty() && std::all_of(xs.begin(), xs.end(), [](auto& s) { return number_of(s).has_value(); });
  double lo = 0, hi = 0;
  if (numeric) {
    lo = hi = *number_of(xs[0]);
    for (const auto& s : xs) lo = std::min(lo, *number_of(s)), hi = std::max(hi, *number_of(s));
  }
  // Learning rates and the like span decades: a log axis spaces them evenly.
  bool log_x = numeric && lo > 0 && hi / lo >= 10;
  // One series per combination of the other keys, in the grid's order.
  std::vector<std::string> series;
  std::map<std::string, std::map<std::string, std::vector<double>>> points;  // series -> x -> values
  for (const auto& c : r.cells) {
    if (x >= c.values.size() || c.values[x].empty()) continue;
    std::string s = values_name(r, c.values, others);
    if (std::find(series.begin(), series.end(), s) == series.end()) series.push_back(s);
    auto it = c.metrics.find(metric);
    if (c.completed && it != c.metrics.end()) points[s][c.values[x]].push_back(it->second);
  }
  GridPlot p;
  int blocks = 0;
  std::vector<std::string> clauses;
  static const std::vector<std::string> colours = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  for (size_t si = 0; si < series.size(); ++si) {
    const auto& s = series[si];
    if (!points.count(s)) continue;
    std::string block = fmt::format("# {}\n", s.empty() ? metric : s);
    for (size_t xi = 0; xi < xs.size(); ++xi) {
      auto it = points[s].find(xs[xi]);
      if (it == points[s].end()) continue;
      MetricStat st = metric_stat(it->second);
      block += fmt::format("{} {} {} {}\n", numeric ? xs[xi] : std::to_string(xi), exact_value(st.mean),
                           st.std ? exact_value(*st.std) : "0", data_word(xs[xi]));
    }
    p.data += (blocks ? "\n\n" : "") + block;
    std::string title = s.empty() ? (avg ? "mean ± std" : metric) : s;
    std::string colour = colours[si % colours.size()];
    std::string tic = numeric ? "" : ":xtic(4)";
    clauses.push_back(avg ? fmt::format("{} index {} using 1:2:3{} with yerrorlines linewidth 2 pointtype 7 "
                                        "linecolor rgb \"{}\" title {}",
                                        gnuplot_quote(data_file), blocks, tic, colour, gnuplot_quote(title))
                          : fmt::format("{} index {} using 1:2{} with linespoints linewidth 2 pointtype 7 linecolor "
                                        "rgb \"{}\" title {}",
                                        gnuplot_quote(data_file), blocks, tic, colour, gnuplot_quote(title)));
    ++blocks;
  }
  // The best cell (or row of seeds) circled, where the plot shows its metric.
  if (r.best && r.best->metric == metric && blocks > 0) {
    std::optional<std::pair<std::string, double>> at;  // x value, y
    if (avg) {
      for (const auto& g : r.groups)
        if (g.best && x < g.values.size()) at = std::make_pair(g.values[x], g.metrics.at(metric).mean);
    } else {
      for (const auto& c : r.cells)
        if (c.best && x < c.values.size()) at = std::make_pair(c.values[x], c.metrics.at(metric));
    }
    auto xi = at ? std::find(xs.begin(), xs.end(), at->first) : xs.end();
    if (xi != xs.end()) {
      p.data += fmt::format("\n\n# best\n{} {} 0 {}\n", numeric ? *xi : std::to_string(xi - xs.begin()),
                            exact_value(at->second), data_word(*xi));
      clauses.push_back(fmt::format("{} index {} using 1:2 with points pointtype 6 pointsize 3 linewidth 2 "
                                    "linecolor rgb \"#d62728\" title {}",
                                    gnuplot_quote(data_file), blocks, gnuplot_quote(fmt::format("best ({})", r.best->maximize ? "max" : "min"))));
    }
  }
  if (blocks == 0)
    throw UserError(Location{"--plot"}, "",
                    fmt::format("no COMPLETED cell has {} yet: nothing to plot", metric));
  std::string what = avg ? fmt::format(" (mean ± std over {})", r.keys[avg_key]) : "";
  std::string better = r.best && r.best->metric == metric ? (r.best->maximize ? ", higher is better" : ", lower is better") : "";
  std::string xrange;
  if (!numeric) xrange = fmt::format("set xrange [-0.5:{}]\n", static_cast<double>(xs.size()) - 0.5);
  else if (log_x) xrange = fmt::format("set xrange [{}:{}]\n", exact_value(lo / 1.5), exact_value(hi * 1.5));
  else if (hi > lo) xrange = fmt::format("set xrange [{}:{}]\n", exact_value(lo - (hi - lo) * 0.06), exact_value(hi + (hi - lo) * 0.06));
  else xrange = fmt::format("set xrange [{}:{}]\n", exact_value(lo - 1), exact_value(lo + 1));
  p.script = fmt::format(R"gp(set terminal {terminal} size 900,520
set output {out}
set termoption noenhanced
set datafile separator whitespace
set title {title}
set xlabel {xlabel}
set ylabel {ylabel}
set key outside right top
set grid
{logx}{xrange}set offsets 0, 0, graph 0.08, graph 0.08
plot {clauses}
)gp",
                         fmt::arg("terminal", terminal), fmt::arg("out", gnuplot_quote(out)),
                         fmt::arg("title", gnuplot_quote(fmt::format("{} by {}{} — sweep {}", metric, r.keys[x], what, r.run_id))),
                         fmt::arg("xlabel", gnuplot_quote(r.key_paths[x] + (log_x ? " (log scale)" : ""))),
                         fmt::arg("ylabel", gnuplot_quote(metric + better)),
                         fmt::arg("logx", log_x ? fmt::format("set logscale x 10\nset xtics ({})\n", join(xs, ", ")) : std::string(numeric ? fmt::format("set xtics ({})\n", join(xs, ", ")) : "")),
                         fmt::arg("xrange", xrange), fmt::arg("clauses", join(clauses, ", \\\n     ")));
  return p;
}

}  // namespace ddpctl
