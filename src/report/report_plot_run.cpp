#include "report/report_plot_run.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>

#include "base/diagnostics.hpp"
#include "base/files.hpp"
#include "explain/report_plot.hpp"
#include "runs/usage.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

std::vector<std::string> plot_report(const std::vector<ReportRow>& rows, const std::string& path, CommandRunner& runner) {
  std::string ext = fs::path(path).extension().string();
  if (ext != ".svg" && ext != ".png")
    throw UserError(Location{"--plot"}, "", fmt::format("{}: the plot is written as .svg or .png", path));
  bool any = false, any_usage = false;
  for (const auto& r : rows) any = any || r.speedup.has_value(), any_usage = any_usage || r.rss_peak_bytes.has_value();
  if (!any && !any_usage)
    throw UserError(Location{"--plot"}, "", "no run has a throughput or usage samples yet: nothing to plot");
  std::string terminal = "svg dynamic enhanced font 'sans,11'";
  if (ext == ".png") {
    // gnuplot-nox has pngcairo; a build without cairo has only the gd png.
    CommandResult t = runner.run({"gnuplot", "-e", "set terminal pngcairo"}, std::chrono::seconds(20));
    terminal = t.ok() && t.err.empty() ? "pngcairo enhanced font 'sans,11'" : "png";
  }
  ScratchDir scratch("ddpctl-plot");
  const std::string& dir = scratch.path();
  auto draw = [&](const std::string& script, const std::string& out) {
    CommandResult r = runner.run({"gnuplot", script}, std::chrono::seconds(60));
    if (r.not_found)
      throw UserError(Location{"--plot"}, "", "gnuplot is not installed (Debian: apt-get install gnuplot-nox)");
    if (!r.ok() || !fs::exists(out)) throw UserError(Location{"--plot"}, "", "gnuplot failed: " + r.describe());
  };
  std::vector<std::string> said;
  if (any) {
    write_file_atomic(dir + "/data.txt", report_plot_data(rows));
    write_file_atomic(dir + "/plot.gp", report_gnuplot(rows, dir + "/data.txt", fs::absolute(path).string(), terminal));
    draw(dir + "/plot.gp", path);
    said.push_back("plot written to " + path);
  }
  // One time series per job: utilisation and memory over time, a line per node.
  for (size_t i = 0; i < rows.size(); ++i) {
    const ReportRow& row = rows[i];
    if (!row.rss_peak_bytes || row.usage_base.empty()) continue;
    auto samples = read_usage(row.usage_base);
    // CPU use is measured between samples: a job sampled once per node has no line to draw.
    bool drawable = false;
    for (const auto& [node, v] : samples)
      for (const auto& smp : v) drawable = drawable || smp.cpu_pct.has_value();
    if (!drawable) {
      said.push_back(fmt::format("no usage picture for {} (job {}): fewer than two samples on every node", row.label,
                                 row.job_id));
      continue;
    }
    std::vector<std::pair<std::string, std::string>> node_files;
    for (const auto& [node, data] : usage_plot_data(samples)) {
      const auto& v = samples.at(node);
      if (std::none_of(v.begin(), v.end(), [](const UsageSample& x) { return x.cpu_pct.has_value(); }))
        continue;  // sampled once: gnuplot would find no point to draw
      std::string file = fmt::format("{}/usage.{}.{}.txt", dir, i, node_files.size());
      write_file_atomic(file, data);
      node_files.emplace_back(node, file);
    }
    std::string out = usage_plot_path(path, row);
    std::string script = fmt::format("{}/usage.{}.gp", dir, i);
    bool gpus = row.gpu_util_mean.has_value();
    write_file_atomic(script, usage_gnuplot(fmt::format("{} (job {}, run {})", row.label, row.job_id, row.run_id),
                                            node_files, gpus, fs::absolute(out).string(), terminal));
    draw(script, out);
    said.push_back("plot written to " + out);
  }
  return said;
}

}  // namespace ddpctl
