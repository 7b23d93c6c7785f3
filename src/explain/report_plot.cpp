#include "explain/report_plot.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <set>

#include "base/files.hpp"
#include "base/text.hpp"
#include "runs/usage.hpp"

namespace ddpctl {

std::string gnuplot_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

std::string usage_plot_path(const std::string& plot, const ReportRow& row) {
  std::filesystem::path p(plot);
  std::string stem = (p.parent_path() / p.stem()).string();
  return fmt::format("{}.{}-{}.usage{}", stem, row.label, row.job_id, p.extension().string());
}

std::string report_plot_data(const std::vector<ReportRow>& rows) {
  std::vector<const ReportRow*> shown;
  for (const auto& r : rows)
    if (r.speedup) shown.push_back(&r);
  // By ranks, and at equal ranks (1x2 and 2x1) by speedup, highest first.
  std::stable_sort(shown.begin(), shown.end(), [](const ReportRow* a, const ReportRow* b) {
    return a->world() != b->world() ? a->world() < b->world() : *a->speedup > *b->speedup;
  });
  int base = shown.empty() ? 1 : shown.front()->world();
  double top = 0;
  for (const auto* r : shown) top = std::max({top, *r->speedup, static_cast<double>(r->world()) / base});
  // Shapes of equal ranks share an x: their labels stack above the highest
  // point there, a line apart, so that they never overlap.
  std::string out = "# label ranks speedup efficiency ideal label_y\n";
  double step = std::max(top, 1.0) * 0.07, label_y = 0;
  for (size_t i = 0; i < shown.size(); ++i) {
    const ReportRow* r = shown[i];
    bool first_at_x = i == 0 || shown[i - 1]->world() != r->world();
    label_y = first_at_x ? *r->speedup + step : label_y + step;
    out += fmt::format("\"{}\" {} {:.6f} {:.6f} {:.6f} {:.6f}\n", r->label, r->world(), *r->speedup, *r->efficiency,
                       static_cast<double>(r->world()) / base, label_y);
  }
  return out;
}

std::string report_gnuplot(const std::vector<ReportRow>& rows, const std::string& data_file, const std::string& out,
                           const std::string& terminal) {
  bool gpus = false;
  for (const auto& r : rows) gpus = gpus || r.gpus_per_node > 0;
  std::string what = gpus ? "GPUs" : "ranks";
  // Ranks on a log2 axis with a tick at each power of two (and each measured
  // world size): whole numbers only.
  int lo = 0, hi = 1;
  for (const auto& r : rows)
    if (r.speedup) lo = lo ? std::min(lo, r.world()) : r.world(), hi = std::max(hi, r.world());
  if (lo == 0) lo = 1;
  std::set<int> at;
  for (int p = 1; p <= hi * 2; p *= 2)
    if (p >= lo / 2) at.insert(p);
  for (const auto& r : rows)
    if (r.speedup) at.insert(r.world());
  std::vector<std::string> ticks;
  for (int t : at) ticks.push_back(std::to_string(t));
  return fmt::format(R"gp(set terminal {terminal} size 1000,420
set output {out}
set datafile separator whitespace
set multiplot layout 1,2
set title "Throughput speedup vs {what}"
set xlabel "{what}"
set ylabel "speedup over the smallest shape"
set key top left
set grid
set logscale x 2
set xtics ({xtics})
set mxtics 1
set xrange [{xmin}:{xmax}]
set yrange [0:*]
set offsets 0, 0, graph 0.15, 0
plot {data} using 2:5 with lines dashtype 2 linecolor rgb "#888888" title "ideal", \
     {data} using 2:3 with linespoints pointtype 7 linecolor rgb "#1f77b4" title "measured", \
     {data} using 2:6:1 with labels notitle
set title "Parallel efficiency per shape"
set xlabel "shape (nodes x {what} per node)"
set ylabel "efficiency (%)"
set yrange [0:120]
unset logscale x
set xtics auto
set xrange [*:*]
set style fill solid 0.6
set boxwidth 0.6
plot {data} using 0:($4*100):xtic(1) with boxes linecolor rgb "#1f77b4" notitle, \
     {data} using 0:($4*100):(sprintf("%.0f%%", $4*100)) with labels offset 0,0.8 notitle
unset multiplot
)gp",
                     fmt::arg("terminal", terminal), fmt::arg("out", gnuplot_quote(out)), fmt::arg("what", what),
                     fmt::arg("data", gnuplot_quote(data_file)), fmt::arg("xtics", join(ticks, ", ")),
                     fmt::arg("xmin", fmt::format("{:g}", lo / 1.5)), fmt::arg("xmax", fmt::format("{:g}", hi * 1.5)));
}

std::map<std::string, std::string> usage_plot_data(const std::map<std::string, std::vector<UsageSample>>& samples) {
  double t0 = 0;
  bool first = true;
  for (const auto& [node, v] : samples)
    if (!v.empty()) t0 = first ? v.front().t : std::min(t0, v.front().t), first = false;
  std::map<std::string, std::string> out;
  for (const auto& [node, v] : samples) {
    std::string data = "# minutes cpu_cores rss_gib gpu_util_pct gpu_mem_gib\n";
    int attempt = v.empty() ? 0 : v.front().attempt;
    for (const auto& s : v) {
      if (s.attempt != attempt) data += "\n";  // a requeue: a gap in the lines
      attempt = s.attempt;
      double util = 0, mem = 0;
      for (const auto& g : s.gpus) util += g.util_pct, mem += g.mem_used_mib;
      data += fmt::format("{:.3f} {} {:.3f} {} {}\n", (s.t - t0) / 60,
                          s.cpu_pct ? fmt::format("{:.2f}", *s.cpu_pct / 100) : std::string("?"),
                          static_cast<double>(s.rss_bytes) / (1024.0 * 1024 * 1024),
                          s.gpus.empty() ? std::string("?") : fmt::format("{:.1f}", util / static_cast<double>(s.gpus.size())),
                          s.gpus.empty() ? std::string("?") : fmt::format("{:.3f}", mem / 1024));
    }
    out[node] = data;
  }
  return out;
}

std::string usage_gnuplot(const std::string& title, const std::vector<std::pair<std::string, std::string>>& node_files,
                          bool gpus, const std::string& out, const std::string& terminal) {
  static const std::vector<std::string> colours = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  auto lines = [&](const std::string& column, const std::string& dash, const std::string& what) {
    std::vector<std::string> parts;
    for (size_t i = 0; i < node_files.size(); ++i)
      parts.push_back(fmt::format("{} using 1:{} with lines linewidth 2 {} linecolor rgb \"{}\" title {}",
                                  gnuplot_quote(node_files[i].second), column, dash, colours[i % colours.size()],
                                  gnuplot_quote(node_files[i].first + what)));
    return join(parts, ", \\\n     ");
  };
  std::string gp = fmt::format(R"gp(set terminal {} size 1000,{}
set output {}
set datafile missing "?"
set multiplot layout {},1 title {}
set key outside right top
set grid
set xlabel "minutes since the job's first sample"
set xrange [0:*]
set yrange [0:*]
set offsets 0, 0, graph 0.1, 0
set title "CPU: cores busy (the job's processes, per node)"
set ylabel "cores"
plot {}
)gp",
                               terminal, gpus ? 900 : 620, gnuplot_quote(out), gpus ? 3 : 2, gnuplot_quote(title), lines("2", "", ""));
  if (gpus)
    gp += fmt::format(R"gp(set title "GPU utilisation (mean of the node's GPUs)"
set ylabel "%"
set yrange [0:105]
plot {}
set yrange [0:*]
)gp",
                      lines("4", "", ""));
  gp += fmt::format(R"gp(set title "Memory: RSS of the job's processes{}"
set ylabel "GiB"
plot {}
unset multiplot
)gp",
                    gpus ? " (solid), GPU memory used (dashed)" : "",
                    gpus ? lines("3", "", " RSS") + ", \\\n     " + lines("5", "dashtype 2", " GPU") : lines("3", "", ""));
  return gp;
}

}  // namespace ddpctl
