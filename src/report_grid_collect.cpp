// The grid report's workflow (report_grid.hpp): Slurm's records of the
// sweep's arrays, each cell's metrics from its files, and the plot.
#include <algorithm>
#include <filesystem>
#include <fmt/format.h>

#include "cell_files.hpp"
#include "experiments.hpp"
#include "files.hpp"
#include "job_files.hpp"
#include "metric_pattern.hpp"
#include "report.hpp"
#include "report_grid.hpp"
#include "status_grid.hpp"
#include "task_logs.hpp"
#include "text.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

namespace {

std::string join_quoted(const std::vector<std::string>& items) {
  std::vector<std::string> q;
  for (const auto& i : items) q.push_back("'" + i + "'");
  return join(q, ", ");
}

// The cell's final metrics (cell_files.hpp), into its row.
void put_cell_metrics(const RunShape& shape, const std::string& task_job_id, GridCellRow& row, Output& out) {
  CellMetrics m = read_cell_metrics(shape, task_job_id);
  for (const auto& w : m.warnings) out.warning(w);
  row.metrics = m.values;
  row.source = m.source;
}

}  // namespace

std::optional<Run> grid_run_of(const std::vector<std::string>& targets, const std::string& root) {
  std::vector<Run> runs;
  for (const auto& t : targets)
    for (Run& r : find_runs(root, t)) runs.push_back(std::move(r));
  auto grid = std::find_if(runs.begin(), runs.end(), [](const Run& r) { return r.grid.has_value(); });
  if (grid == runs.end()) return std::nullopt;
  if (runs.size() > 1)
    throw UserError(Location{grid->id}, "",
                    "is a grid's sweep: report it on its own (`ddpctl report " + grid->id +
                        "`), its cells by parameter; the scaling table is for runs of one program on several shapes");
  return std::move(*grid);
}

GridReport collect_grid_report(const Run& run, SlurmClient& slurm, const GridReportOptions& options, Output& out) {
  std::vector<std::string> arrays = array_ids(run);
  std::vector<Job> records;
  std::vector<std::string> notes;
  if (!arrays.empty()) {
    // One squeue for every array of the sweep; one sacct for the cells it no longer shows.
    JobQuery q = slurm.jobs(arrays);
    records = q.jobs;
    bool all_seen = q.answered;
    for (const auto& c : cell_states(run, records))
      if (c.attempt && c.job.state == JobState::Unknown) all_seen = false;
    if (!all_seen) {
      JobQuery acc = slurm.accounting(arrays);
      records.insert(records.end(), acc.jobs.begin(), acc.jobs.end());
      if (!q.answered && !acc.answered)
        notes.push_back(fmt::format("Slurm could not be asked ({}): cells' states are unknown, and their metrics "
                                    "with them (a task's job id names its files)",
                                    q.error.empty() ? acc.error : q.error));
    }
  }
  std::vector<CellState> states = cell_states(run, records);
  std::vector<GridCellRow> rows;
  for (const CellState& s : states) {
    GridCellRow row;
    row.index = s.cell->index;
    row.name = s.cell->name;
    for (const auto& [path, name] : run.grid->keys) {
      std::string v;
      for (const auto& [p, value] : s.cell->values)
        if (p == path) v = value;
      row.values.push_back(v);
    }
    if (!s.attempt) {
      row.state = "NOT SUBMITTED";
      rows.push_back(std::move(row));
      continue;
    }
    row.task = s.shown_id;
    row.state = state_name(s.job.state);
    row.ended = is_terminal(s.job.state);
    row.completed = s.job.state == JobState::Completed;
    // A task's own job id (not the array's "123_4") names its files.
    row.task_job_id = cell_task_job_id(s);
    if (row.ended && !row.task_job_id.empty())
      if (const RunShape* shape = run.shape(s.attempt->shape)) put_cell_metrics(*shape, row.task_job_id, row, out);
    rows.push_back(std::move(row));
  }
  GridReport report = make_grid_report(run, std::move(rows), options);
  report.summary = grid_summary(states, run.grid->max_parallel);
  report.notes.insert(report.notes.end(), notes.begin(), notes.end());
  bool any_ended = false, any_metrics = false;
  for (const auto& c : report.cells) any_ended = any_ended || c.ended, any_metrics = any_metrics || !c.metrics.empty();
  if (any_ended && !any_metrics)
    report.notes.push_back(
        "no ended cell has metrics: the bundled trainer writes its metrics file; another program's final numbers "
        "are read from its rank-0 log through the spec's `metric:` patterns (docs/report.md)");
  return report;
}

std::string plot_grid_report(const GridReport& r, const std::string& path, const std::string& metric,
                             const std::string& x, CommandRunner& runner) {
  std::string ext = fs::path(path).extension().string();
  if (ext != ".svg" && ext != ".png")
    throw UserError(Location{"--plot"}, "", fmt::format("{}: the plot is written as .svg or .png", path));
  std::string m = !metric.empty() ? metric : r.best ? r.best->metric : r.metrics.empty() ? "" : r.metrics.front();
  if (m.empty()) throw UserError(Location{"--plot"}, "", "no cell has metrics yet: nothing to plot");
  if (std::find(r.metrics.begin(), r.metrics.end(), m) == r.metrics.end())
    throw UserError(Location{"--plot-metric"}, "",
                    fmt::format("{}: no cell has this metric; the metrics found are {}{}", printable(m),
                                join_quoted(r.metrics), did_you_mean(m, r.metrics)));
  if (r.keys.empty()) throw UserError(Location{"--plot"}, "", "the sweep records no grid keys: nothing to plot against");
  size_t xi = 0;
  if (!x.empty()) {
    auto it = std::find(r.keys.begin(), r.keys.end(), x);
    auto ip = std::find(r.key_paths.begin(), r.key_paths.end(), x);
    if (it == r.keys.end() && ip == r.key_paths.end())
      throw UserError(Location{"--x"}, "", fmt::format("{}: the grid has no such key; its keys are {}{}", printable(x),
                                                       join_quoted(r.keys), did_you_mean(x, r.keys)));
    xi = it != r.keys.end() ? static_cast<size_t>(it - r.keys.begin()) : static_cast<size_t>(ip - r.key_paths.begin());
  } else {
    // The first key that is not the seed axis: the seeds are averaged.
    for (size_t k = 0; k < r.keys.size(); ++k)
      if (!r.seed_key || k != *r.seed_key) {
        xi = k;
        break;
      }
  }
  std::string terminal = "svg dynamic enhanced font 'sans,11'";
  if (ext == ".png") {
    CommandResult t = runner.run({"gnuplot", "-e", "set terminal pngcairo"}, std::chrono::seconds(20));
    terminal = t.ok() && t.err.empty() ? "pngcairo enhanced font 'sans,11'" : "png";
  }
  ScratchDir scratch("ddpctl-plot");
  std::string data = scratch.path() + "/grid.txt", script = scratch.path() + "/grid.gp";
  GridPlot p = grid_plot(r, m, xi, data, fs::absolute(path).string(), terminal);
  write_file_atomic(data, p.data);
  write_file_atomic(script, p.script);
  CommandResult res = runner.run({"gnuplot", script}, std::chrono::seconds(60));
  if (res.not_found) throw UserError(Location{"--plot"}, "", "gnuplot is not installed (Debian: apt-get install gnuplot-nox)");
  if (!res.ok() || !fs::exists(path)) throw UserError(Location{"--plot"}, "", "gnuplot failed: " + res.describe());
  return fmt::format("plot written to {} ({} by {})", path, m, r.keys[xi]);
}

}  // namespace ddpctl
