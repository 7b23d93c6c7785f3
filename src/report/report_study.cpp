#include "report/report_study.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <map>

#include "base/diagnostics.hpp"
#include "base/text.hpp"
#include "explain/cell_files.hpp"
#include "report/report_collect.hpp"
#include "runs/run_store.hpp"
#include "slurm/slurm_job.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

namespace {

// A trial's values: its --set words but the run's name and checkpoint
// folder (each trial's own, submit/study_trial.hpp).
std::vector<std::pair<std::string, std::string>> trial_values(const Run& run) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& o : run.overrides) {
    auto eq = o.find('=');
    if (eq == std::string::npos) continue;
    if (std::string key = o.substr(0, eq); key == "name" || key == "trainer.checkpoint_dir") continue;
    out.emplace_back(o.substr(0, eq), o.substr(eq + 1));
  }
  return out;
}

// The grid of the trials' keys, named as a grid's are: the last part of
// each path, the whole path where two end alike.
RunGrid study_grid(const std::vector<Run>& runs) {
  RunGrid grid;
  std::vector<std::string> paths;
  for (const auto& run : runs)
    for (const auto& [path, value] : trial_values(run))
      if (std::find(paths.begin(), paths.end(), path) == paths.end()) paths.push_back(path);
  auto last = [](const std::string& p) { return p.substr(p.rfind('.') == std::string::npos ? 0 : p.rfind('.') + 1); };
  std::map<std::string, int> ends;
  for (const auto& p : paths) ++ends[last(p)];
  for (const auto& p : paths) grid.keys.emplace_back(p, ends[last(p)] > 1 ? p : last(p));
  return grid;
}

GridCellRow trial_row(const Run& run, const ReportRow& r, const RunGrid& grid, int index, Output& out) {
  GridCellRow c;
  c.index = index;
  auto values = trial_values(run);
  std::vector<std::string> named;
  for (const auto& [path, name] : grid.keys) {
    std::string v;
    for (const auto& [p, value] : values)
      if (p == path) v = value;
    c.values.push_back(v);
    if (!v.empty()) named.push_back(name + "=" + v);
  }
  c.name = join(named, ",");
  c.task = c.task_job_id = r.job_id;
  c.state = r.state ? state_name(*r.state) : r.job_id.empty() ? "NOT SUBMITTED" : "UNKNOWN";
  c.ended = r.state && is_terminal(*r.state);
  c.completed = r.state == JobState::Completed;
  const Attempt* a = r.job_id.empty() ? nullptr : job_attempt(run, r.job_id);
  if (const RunShape* shape = a ? run.shape(a->shape) : nullptr) {
    CellMetrics m = read_cell_metrics(*shape, r.job_id);
    for (const auto& w : m.warnings) out.warning(w);
    c.metrics = m.values;
    c.source = m.source;
  }
  if (r.gpu_hours) c.metrics["gpu_hours"] = *r.gpu_hours;
  else if (r.node_hours) c.metrics["node_hours"] = *r.node_hours;
  return c;
}

}  // namespace

GridReport study_report(const Experiment& study, const std::string& root, SlurmClient& slurm,
                        const GridReportOptions& options, Output& out, long long now) {
  std::vector<Run> runs;
  std::vector<int> trials;
  for (const auto& [trial, id] : study.runs) {
    try {
      runs.push_back(load_run((fs::path(root) / id).string()));
      trials.push_back(std::atoi(trial.c_str()));
    } catch (const std::exception& e) {
      out.warning(fmt::format("study {}: trial {}'s run {} cannot be read: {}", study.name, trial, id, e.what()));
    }
  }
  if (runs.empty())
    throw UserError(Location{study.file}, "", fmt::format("study {} has no trial's run recorded yet", study.name));
  std::vector<ReportRow> rows = runs_report_rows(runs, slurm, out, now);
  Run as_grid;  // the study as a grid whose cells are its trials
  as_grid.id = study.id;
  as_grid.grid = study_grid(runs);
  std::vector<GridCellRow> cells;
  std::map<std::string, int> by_state;
  for (size_t i = 0; i < runs.size(); ++i) {
    cells.push_back(trial_row(runs[i], rows[i], *as_grid.grid, trials[i], out));
    ++by_state[cells.back().state];
  }
  GridReport report = make_grid_report(as_grid, std::move(cells), options);
  report.kind = "study";
  std::vector<std::string> counts;
  for (const auto& [state, n] : by_state) counts.push_back(fmt::format("{} {}", n, lower(state)));
  report.summary = fmt::format("{} trial{}: {}", runs.size(), runs.size() == 1 ? "" : "s", join(counts, ", "));
  return report;
}

}  // namespace ddpctl
