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

// The x axis: the values of the key in the grid's order, and whether they
// are all numbers (then drawn at their values, else at their indexes with
// the values as tics).
struct PlotAxis {
  std::vector<std::string> values;
  bool numeric = false;
  double lo = 0, hi = 0;
  bool log = false;
  std::string at(size_t i) const { return numeric ? values[i] : std::to_string(i); }
};

PlotAxis plot_axis(const GridReport& r, size_t x) {
  PlotAxis a;
  for (const auto& c : r.cells)
    if (x < c.values.size() && !c.values[x].empty() &&
        std::find(a.values.begin(), a.values.end(), c.values[x]) == a.values.end())
      a.values.push_back(c.values[x]);
  a.numeric = !a.values.empty() &&
              std::all_of(a.values.begin(), a.values.end(), [](auto& s) { return number_of(s).has_value(); });
  if (a.numeric) {
    a.lo = a.hi = *number_of(a.values[0]);
    for (const auto& s : a.values) a.lo = std::min(a.lo, *number_of(s)), a.hi = std::max(a.hi, *number_of(s));
  }
  // Learning rates and the like span decades: a log axis spaces them evenly.
  a.log = a.numeric && a.lo > 0 && a.hi / a.lo >= 10;
  return a;
}

// The script's lines for the x axis: its scale, tics and range.
std::string axis_settings(const PlotAxis& a) {
  const auto& xs = a.values;
  double lo = a.lo, hi = a.hi;
  std::string tics = a.log ? fmt::format("set logscale x 10\nset xtics ({})\n", join(xs, ", "))
                           : std::string(a.numeric ? fmt::format("set xtics ({})\n", join(xs, ", ")) : "");
  std::string xrange;
  if (!a.numeric) xrange = fmt::format("set xrange [-0.5:{}]\n", static_cast<double>(xs.size()) - 0.5);
  else if (a.log) xrange = fmt::format("set xrange [{}:{}]\n", exact_value(lo / 1.5), exact_value(hi * 1.5));
  else if (hi > lo) xrange = fmt::format("set xrange [{}:{}]\n", exact_value(lo - (hi - lo) * 0.06), exact_value(hi + (hi - lo) * 0.06));
  else xrange = fmt::format("set xrange [{}:{}]\n", exact_value(lo - 1), exact_value(lo + 1));
  return tics + xrange;
}

// A line of the plot: a combination of the other keys' values, and per x
// value the metric of its COMPLETED cells.
struct PlotSeries {
  std::string name;
  std::map<std::string, std::vector<double>> points;  // x value -> values
};

// One series per combination of the `others` keys, in the grid's order.
std::vector<PlotSeries> plot_series(const GridReport& r, const std::string& metric, size_t x,
                                    const std::vector<size_t>& others) {
  std::vector<PlotSeries> series;
  for (const auto& c : r.cells) {
    if (x >= c.values.size() || c.values[x].empty()) continue;
    std::string s = values_name(r, c.values, others);
    auto at = std::find_if(series.begin(), series.end(), [&](const PlotSeries& p) { return p.name == s; });
    if (at == series.end()) at = series.insert(series.end(), PlotSeries{s, {}});
    auto it = c.metrics.find(metric);
    if (c.completed && it != c.metrics.end()) at->points[c.values[x]].push_back(it->second);
  }
  return series;
}

// A data block (mean and std at each x) and its plot clause per series
// with a point; `avg`: with error bars. Returns the blocks written.
int draw_series(const std::vector<PlotSeries>& series, const PlotAxis& axis, const std::string& metric, bool avg,
                const std::string& data_file, GridPlot& p, std::vector<std::string>& clauses) {
  static const std::vector<std::string> colours = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  const auto& xs = axis.values;
  int blocks = 0;
  for (size_t si = 0; si < series.size(); ++si) {
    const auto& s = series[si].name;
    const auto& points = series[si].points;
    if (points.empty()) continue;
    std::string block = fmt::format("# {}\n", s.empty() ? metric : s);
    for (size_t xi = 0; xi < xs.size(); ++xi) {
      auto it = points.find(xs[xi]);
      if (it == points.end()) continue;
      MetricStat st = metric_stat(it->second);
      block += fmt::format("{} {} {} {}\n", axis.at(xi), exact_value(st.mean),
                           st.std ? exact_value(*st.std) : "0", data_word(xs[xi]));
    }
    p.data += (blocks ? "\n\n" : "") + block;
    std::string title = s.empty() ? (avg ? "mean ± std" : metric) : s;
    std::string colour = colours[si % colours.size()];
    std::string tic = axis.numeric ? "" : ":xtic(4)";
    clauses.push_back(avg ? fmt::format("{} index {} using 1:2:3{} with yerrorlines linewidth 2 pointtype 7 "
                                        "linecolor rgb \"{}\" title {}",
                                        gnuplot_quote(data_file), blocks, tic, colour, gnuplot_quote(title))
                          : fmt::format("{} index {} using 1:2{} with linespoints linewidth 2 pointtype 7 linecolor "
                                        "rgb \"{}\" title {}",
                                        gnuplot_quote(data_file), blocks, tic, colour, gnuplot_quote(title)));
    ++blocks;
  }
  return blocks;
}

// The best cell (or row of seeds) circled as data block `block`, where the
// plot shows its metric and x value.
void draw_best(const GridReport& r, const std::string& metric, size_t x, bool avg, const PlotAxis& axis,
               const std::string& data_file, int block, GridPlot& p, std::vector<std::string>& clauses) {
  if (!r.best || r.best->metric != metric) return;
  std::optional<std::pair<std::string, double>> at;  // x value, y
  if (avg) {
    for (const auto& g : r.groups)
      if (g.best && x < g.values.size()) at = std::make_pair(g.values[x], g.metrics.at(metric).mean);
  } else {
    for (const auto& c : r.cells)
      if (c.best && x < c.values.size()) at = std::make_pair(c.values[x], c.metrics.at(metric));
  }
  const auto& xs = axis.values;
  auto xi = at ? std::find(xs.begin(), xs.end(), at->first) : xs.end();
  if (xi == xs.end()) return;
  p.data += fmt::format("\n\n# best\n{} {} 0 {}\n", axis.at(static_cast<size_t>(xi - xs.begin())),
                        exact_value(at->second), data_word(*xi));
  clauses.push_back(fmt::format("{} index {} using 1:2 with points pointtype 6 pointsize 3 linewidth 2 "
                                "linecolor rgb \"#d62728\" title {}",
                                gnuplot_quote(data_file), block,
                                gnuplot_quote(fmt::format("best ({})", r.best->maximize ? "max" : "min"))));
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
  PlotAxis axis = plot_axis(r, x);
  GridPlot p;
  std::vector<std::string> clauses;
  int blocks = draw_series(plot_series(r, metric, x, others), axis, metric, avg, data_file, p, clauses);
  if (blocks == 0)
    throw UserError(Location{"--plot"}, "",
                    fmt::format("no COMPLETED cell has {} yet: nothing to plot", metric));
  draw_best(r, metric, x, avg, axis, data_file, blocks, p, clauses);
  std::string what = avg ? fmt::format(" (mean ± std over {})", r.keys[avg_key]) : "";
  std::string better = r.best && r.best->metric == metric ? (r.best->maximize ? ", higher is better" : ", lower is better") : "";
  p.script = fmt::format(R"gp(set terminal {terminal} size 900,520
set output {out}
set termoption noenhanced
set datafile separator whitespace
set title {title}
set xlabel {xlabel}
set ylabel {ylabel}
set key outside right top
set grid
{axis}set offsets 0, 0, graph 0.08, graph 0.08
plot {clauses}
)gp",
                         fmt::arg("terminal", terminal), fmt::arg("out", gnuplot_quote(out)),
                         fmt::arg("title", gnuplot_quote(fmt::format("{} by {}{} — {} {}", metric, r.keys[x], what, r.kind, r.run_id))),
                         fmt::arg("xlabel", gnuplot_quote(r.key_paths[x] + (axis.log ? " (log scale)" : ""))),
                         fmt::arg("ylabel", gnuplot_quote(metric + better)),
                         fmt::arg("axis", axis_settings(axis)), fmt::arg("clauses", join(clauses, ", \\\n     ")));
  return p;
}

}  // namespace ddpctl
