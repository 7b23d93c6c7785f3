// ddpctl report RUN|EXPERIMENT...: the scaling table of runs, from their
// metrics files and Slurm's accounting; --plot draws it through gnuplot.
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <memory>

#include "app.hpp"
#include "common.hpp"
#include "experiments.hpp"
#include "files.hpp"
#include "race.hpp"
#include "report.hpp"
#include "report_cli.hpp"
#include "text.hpp"

namespace ddpctl::cli {

namespace fs = std::filesystem;

namespace {

struct ReportOptions {
  std::vector<std::string> targets;
  std::string runs, format = "table", plot;
};

// Draws the rows into `out` (.svg or .png) with gnuplot.
void plot(const std::vector<ReportRow>& rows, const std::string& out) {
  std::string ext = fs::path(out).extension().string();
  if (ext != ".svg" && ext != ".png")
    throw UserError(Location{"--plot"}, "", fmt::format("{}: the plot is written as .svg or .png", out));
  bool any = false;
  for (const auto& r : rows) any = any || r.speedup.has_value();
  if (!any) throw UserError(Location{"--plot"}, "", "no run has a throughput yet: nothing to plot");
  SystemCommandRunner runner;
  std::string terminal = "svg dynamic enhanced font 'sans,11'";
  if (ext == ".png") {
    // gnuplot-nox has pngcairo; a build without cairo has only the gd png.
    CommandResult t = runner.run({"gnuplot", "-e", "set terminal pngcairo"}, std::chrono::seconds(20));
    terminal = t.ok() && t.err.empty() ? "pngcairo enhanced font 'sans,11'" : "png";
  }
  ScratchDir scratch("ddpctl-plot");
  const std::string& dir = scratch.path();
  write_file_atomic(dir + "/data.txt", report_plot_data(rows));
  write_file_atomic(dir + "/plot.gp", report_gnuplot(rows, dir + "/data.txt", fs::absolute(out).string(), terminal));
  CommandResult r = runner.run({"gnuplot", dir + "/plot.gp"}, std::chrono::seconds(60));
  if (r.not_found)
    throw UserError(Location{"--plot"}, "", "gnuplot is not installed (Debian: apt-get install gnuplot-nox)");
  if (!r.ok() || !fs::exists(out))
    throw UserError(Location{"--plot"}, "", "gnuplot failed: " + r.describe());
  std::cerr << fmt::format("ddpctl: plot written to {}\n", out);
}

void run_report(const ReportOptions& o) {
  if (o.format != "table" && o.format != "markdown" && o.format != "csv" && o.format != "json")
    throw UserError(Location{"--format"}, "", fmt::format("{}: one of table, markdown, csv, json{}", printable(o.format),
                                                         did_you_mean(o.format, {"table", "markdown", "csv", "json"})));
  std::vector<ReportRow> rows = collect_report(o.targets, runs_root(o.runs));
  if (o.format == "table") std::cout << report_table(rows);
  if (o.format == "markdown") std::cout << report_markdown(rows);
  if (o.format == "csv") std::cout << report_csv(rows);
  if (o.format == "json") std::cout << report_json(rows);
  if (!o.plot.empty()) plot(rows, o.plot);
}

}  // namespace

std::vector<ReportRow> collect_report(const std::vector<std::string>& targets, const std::string& root) {
  std::vector<Run> runs;
  for (const auto& t : targets)
    for (Run& r : find_runs(root, t)) runs.push_back(std::move(r));
  // Each run's job: a race's winner, else its latest job.
  std::vector<const Attempt*> attempts;
  std::vector<std::string> ids;
  for (const auto& run : runs) {
    const Attempt* chosen = run.latest_job();
    if (auto race = read_race(run); race.winner)
      for (const auto& a : run.attempts)
        if (a.job_id == race.winner->job_id) chosen = &a;
    attempts.push_back(chosen);
    if (chosen) ids.push_back(chosen->job_id);
  }
  SystemCommandRunner runner;
  SlurmClient slurm(runner);
  JobStates states = lookup_jobs(slurm, ids);
  if (!states.error.empty())
    std::cerr << "ddpctl: warning: Slurm could not be asked (" << states.error
              << "); wall times come from the metrics files\n";
  std::vector<ReportRow> rows;
  long long now = std::time(nullptr);
  bool any_metrics = false;
  for (size_t i = 0; i < runs.size(); ++i) {
    const Attempt* a = attempts[i];
    const Job* job = nullptr;
    if (a) {
      const Job& j = states.jobs.at(a->job_id);
      if (j.state != "UNKNOWN") job = &j;
    }
    ReportRow probe = make_report_row(runs[i], a, job, nullptr, now);
    MetricsFile metrics;
    if (!probe.metrics_path.empty()) metrics = read_metrics(probe.metrics_path);
    for (const auto& w : metrics.warnings) std::cerr << "ddpctl: warning: " << w << '\n';
    any_metrics = any_metrics || !metrics.epochs.empty();
    rows.push_back(make_report_row(runs[i], a, job, &metrics, now));
  }
  if (!any_metrics) {
    std::vector<std::string> where;
    for (const auto& r : rows) where.push_back(r.metrics_path.empty() ? r.run_id + ": no job" : r.metrics_path);
    throw UserError(fmt::format("no metrics in any of the runs yet (the bundled trainer writes one line per epoch "
                                "to $DDPCTL_METRICS_FILE): {}",
                                join(where, ", ")));
  }
  compute_scaling(rows);
  return rows;
}

void setup_report(CLI::App& app) {
  auto opts = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand("report", "Scaling table of runs or experiments: throughput, speedup, "
                                               "efficiency, time, GPU-hours, memory");
  cmd->add_option("targets", opts->targets, "Runs or experiments (name, id or path)")->required();
  cmd->add_option("--format", opts->format, "table (default), markdown, csv or json");
  cmd->add_option("--plot", opts->plot, "Also draw speedup and efficiency into FILE.svg or FILE.png (gnuplot)");
  cmd->add_option("--runs", opts->runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  cmd->callback([opts] { run_report(*opts); });
}

}  // namespace ddpctl::cli
