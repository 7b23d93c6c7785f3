// The grid report's workflow (report_grid_collect.hpp): Slurm's records of the
// sweep's arrays, each cell's metrics from its files, and the plot.
#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "explain/cell_files.hpp"
#include "explain/experiments.hpp"
#include "base/files.hpp"
#include "runs/job_files.hpp"
#include "spec/metric_pattern.hpp"
#include "explain/report.hpp"
#include "explain/report_table.hpp"
#include "report/report_grid_collect.hpp"
#include "report/report_plot_run.hpp"
#include "report/report_rows.hpp"
#include "explain/parameter_plot.hpp"
#include "explain/parameter_table.hpp"
#include "explain/status_grid.hpp"
#include "runs/task_logs.hpp"
#include "base/text.hpp"
#include "base/values.hpp"

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

// The cells of one array share its #SBATCH lines, which a CPU shape's
// procs_per_node need not change (the cell's own script starts its ranks):
// the cell's own value then, and the label of its shape.
void own_ranks(const RunCell& cell, ReportRow& row) {
  for (const auto& [path, value] : cell.values)
    if (path == "procs_per_node" && row.gpus_per_node == 0)
      if (auto ranks = parse_int(value, 1, 1024, nullptr); ranks && *ranks != row.ranks_per_node) {
        row.ranks_per_node = static_cast<int>(*ranks);
        row.label = fmt::format("{}x{}", row.nodes, row.ranks_per_node);
      }
}

}  // namespace

std::optional<Run> grid_run_of(const std::vector<std::string>& targets, const std::string& root) {
  std::vector<Run> runs;
  for (const auto& t : targets)
    for (Run& r : find_runs(root, t)) runs.push_back(std::move(r));
  auto grid = std::find_if(runs.begin(), runs.end(), [](const Run& r) { return r.grid.has_value(); });
  if (grid == runs.end()) return std::nullopt;
  // A grid of shapes with other runs: one scaling table of them all (collect_report).
  if (runs.size() > 1 && std::all_of(runs.begin(), runs.end(), [](const Run& r) {
        return !r.grid || grid_report_kind(*r.grid) == GridReportKind::Scaling;
      }))
    return std::nullopt;
  if (runs.size() > 1)
    throw UserError(Location{grid->id}, "",
                    "is a grid's sweep: report it on its own (`ddpctl report " + grid->id +
                        "`), its cells by parameter; the scaling table is for runs of one program on several shapes");
  return std::move(*grid);
}

GridRecords read_grid_records(const Run& run, SlurmClient& slurm) {
  GridRecords out;
  // The arrays whose every cell's end the ledger keeps are not asked about.
  std::vector<std::string> arrays = array_ids(run, true);
  if (arrays.empty()) return out;
  // One squeue for every array of the sweep; one sacct for the cells it no longer shows.
  JobQuery q = slurm.jobs(arrays);
  out.jobs = q.jobs;
  bool all_seen = q.answered;
  for (const auto& c : cell_states(run, out.jobs))
    if (c.attempt && c.job.state == JobState::Unknown) all_seen = false;
  if (all_seen) return out;
  JobQuery acc = slurm.accounting(arrays);
  for (const Job& j : acc.jobs) out.accounted.insert(j.id);
  out.jobs.insert(out.jobs.end(), acc.jobs.begin(), acc.jobs.end());
  if (!q.answered && !acc.answered)
    out.notes.push_back(fmt::format("Slurm could not be asked ({}): cells' states are unknown, and their metrics "
                                    "with them (a task's job id names its files)",
                                    q.error.empty() ? acc.error : q.error));
  return out;
}

GridReport collect_grid_report(const Run& run, SlurmClient& slurm, const GridReportOptions& options, Output& out) {
  return grid_report_of(run, read_grid_records(run, slurm), options, out);
}

GridReport grid_report_of(const Run& run, const GridRecords& records, const GridReportOptions& options, Output& out) {
  const std::vector<std::string>& notes = records.notes;
  std::vector<CellState> states = cell_states(run, records.jobs);
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

bool is_shape_key(const std::string& path) {
  // The fields read_shape_fields (spec.cpp) reads for a shape, its site
  // fields, and an entry's label.
  static const std::set<std::string> shape = {
      "nodes",     "gpus_per_node", "procs_per_node", "gpu_type", "partition", "account",   "qos",
      "constraint", "cpus_per_gpu", "cpus_per_task",  "mem",      "time",      "exclusive", "nodelist",
      "exclude",   "reservation",   "label"};
  return shape.count(path) > 0;
}

GridReportKind grid_report_kind(const RunGrid& grid) {
  size_t shape_keys = 0;
  for (const auto& [path, name] : grid.keys) shape_keys += is_shape_key(path) ? 1 : 0;
  if (shape_keys == 0) return GridReportKind::ByParameter;
  return shape_keys == grid.keys.size() ? GridReportKind::Scaling : GridReportKind::Both;
}

std::vector<ScalingTable> grid_scaling_tables(const Run& run, const GridRecords& records, SlurmClient& slurm,
                                              Output& out, long long now) {
  std::vector<ScalingTable> tables;
  if (!run.grid) return tables;
  std::vector<CellState> cells = cell_states(run, records.jobs);
  // What explain_failure knows already: the ends the ledger keeps (their
  // nodes' states), the jobs sacct answered for (who cancelled them).
  JobStates known;
  known.accounted = records.accounted;
  for (const CellState& c : cells)
    if (c.attempt)
      if (const JobEnd* end = c.attempt->task_end(c.cell->index)) known.ends[end->job.id] = *end;
  std::optional<std::vector<NodeInfo>> nodes;  // asked at most once
  std::map<std::vector<std::pair<std::string, std::string>>, size_t> table_of;
  for (const CellState& c : cells) {
    std::vector<std::pair<std::string, std::string>> values;
    for (const auto& [path, name] : run.grid->keys)
      if (!is_shape_key(path)) {
        std::string v;
        for (const auto& [p, value] : c.cell->values)
          if (p == path) v = value;
        values.emplace_back(name, v);
      }
    auto [it, fresh] = table_of.emplace(values, tables.size());
    if (fresh) {
      std::vector<std::string> parts;
      for (const auto& [name, v] : values)
        if (!v.empty()) parts.push_back(name + "=" + v);
      tables.push_back({values, join(parts, ","), {}});
    }
    ScalingTable& t = tables[it->second];
    if (!c.attempt) {
      // Never submitted (or waiting for its race): a row of the shape it would run in.
      ReportRow row = make_report_row(run, nullptr, nullptr, nullptr, now);
      if (const RunShape* shape = run.shape(c.cell->shape)) {
        row.label = shape->label, row.nodes = shape->nodes, row.ranks_per_node = shape->ranks_per_node;
        row.gpus_per_node = shape->gpus_per_node, row.gpus = shape->nodes * shape->gpus_per_node;
      }
      row.problem = c.waits_for_race ? "waits for the race's winner" : "not submitted";
      own_ranks(*c.cell, row);
      t.rows.push_back(std::move(row));
      continue;
    }
    // A task's own job id names its files (the metrics file, logs, samples),
    // as a run's job id does: the row is made as a run's, with that id.
    std::string own = cell_task_job_id(c);
    Attempt task = *c.attempt;
    task.job_id = own.empty() ? c.shown_id : own;
    const Job* job = c.job.state == JobState::Unknown ? nullptr : &c.job;
    ReportRow row;
    if (own.empty()) {
      row = make_report_row(run, &task, job, nullptr, now);
      row.metrics_path.clear();
      row.problem = job ? "not started yet: its task's own job id (which names its files) is not known"
                        : "Slurm did not say where its task is";
    } else {
      row = collect_report_row(run, &task, job, known, slurm, nodes, out, now);
    }
    row.job_id = c.shown_id;
    own_ranks(*c.cell, row);
    t.rows.push_back(std::move(row));
  }
  for (auto& t : tables) compute_scaling(t.rows);
  return tables;
}

GridReports collect_grid_reports(const Run& run, SlurmClient& slurm, const GridReportOptions& options, Output& out,
                                 long long now) {
  GridReports r;
  if (!run.grid) throw UserError(Location{run.id}, "", "is not a grid's sweep");
  r.kind = grid_report_kind(*run.grid);
  if (r.kind == GridReportKind::Scaling) {
    std::string given = options.best ? "--best" : options.seed_key ? "--seed-key" : "";
    if (!given.empty())
      throw UserError(Location{given}, "",
                      "is for a grid's report by parameter; this grid varies the shape alone, and its report is the "
                      "scaling table (speedup and efficiency vs the fewest ranks)");
  }
  GridRecords records = read_grid_records(run, slurm);
  if (r.kind != GridReportKind::ByParameter) {
    r.scaling = grid_scaling_tables(run, records, slurm, out, now);
    if (r.kind == GridReportKind::Scaling) {
      for (const auto& n : records.notes) out.warning(n);
      finish_report_rows(r.scaling.front().rows);  // as an experiment's: an error when no cell has metrics yet
      return r;
    }
  }
  r.by_parameter = grid_report_of(run, records, options, out);
  return r;
}

std::string format_grid_reports(const GridReports& r, const std::string& format, std::vector<std::string>& warnings) {
  if (r.kind == GridReportKind::Scaling) {
    const std::vector<ReportRow>& rows = r.scaling.front().rows;
    // The table and Markdown say it in their notes; CSV and JSON have no place for it.
    if (format == "csv" || format == "json")
      for (const auto& note : {mixed_code_note(rows), mixed_provenance_note(rows)})
        if (!note.empty()) warnings.push_back(note);
    if (format == "markdown") return report_markdown(rows);
    if (format == "csv") return report_csv(rows);
    if (format == "json") return report_json(rows);
    return report_table(rows);
  }
  const GridReport& g = r.by_parameter;
  if (format == "csv") {
    if (r.kind == GridReportKind::Both)
      warnings.push_back("the CSV is the table by parameter; the scaling tables per combination of the keys that do "
                         "not set the shape are in --format table, markdown or json");
    return grid_report_csv(g);
  }
  if (format == "json") {
    if (r.kind == GridReportKind::ByParameter) return grid_report_json(g);
    nlohmann::json doc = nlohmann::json::parse(grid_report_json(g));
    nlohmann::json scaling = nlohmann::json::array();
    for (const auto& t : r.scaling) {
      nlohmann::json values = nlohmann::json::object();
      for (const auto& [name, v] : t.values) values[name] = v;
      scaling.push_back({{"values", values}, {"title", t.title}, {"rows", nlohmann::json::parse(report_json(t.rows))}});
    }
    doc["scaling"] = scaling;
    return doc.dump(2) + "\n";
  }
  bool md = format == "markdown";
  std::string text = md ? grid_report_markdown(g) : grid_report_table(g);
  for (const auto& t : r.scaling) {
    bool any = std::any_of(t.rows.begin(), t.rows.end(), [](const ReportRow& row) { return row.img_per_s.has_value(); });
    std::string head = fmt::format("scaling at {}{}", t.title.empty() ? "the grid's other values" : t.title,
                                   any ? "" : " (no cell has a throughput yet)");
    text += md ? "\n### " + head + "\n\n" + report_markdown(t.rows) : "\n" + head + "\n" + report_table(t.rows);
  }
  return text;
}

std::vector<std::string> plot_grid_reports(const GridReports& r, const std::string& path, const std::string& metric,
                                           const std::string& x, CommandRunner& runner) {
  if (r.kind == GridReportKind::Scaling) {
    for (const auto& [given, name] : {std::pair{!metric.empty(), "--plot-metric"}, {!x.empty(), "--x"}})
      if (given)
        throw UserError(Location{name}, "", "is for a grid's plot by parameter; this grid varies the shape alone, "
                                            "and its plot is speedup and efficiency against the ranks");
    return plot_report(r.scaling.front().rows, path, runner);
  }
  return {plot_grid_report(r.by_parameter, path, metric, x, runner)};
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
