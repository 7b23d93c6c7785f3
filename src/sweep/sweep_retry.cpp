#include "sweep/sweep_retry.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>

#include "explain/race.hpp"
#include "explain/status_grid.hpp"
#include "slurm/job_array.hpp"
#include "sweep/grid_array_submit.hpp"
#include "sweep/grid_continuation.hpp"
#include "sweep/grid_limits.hpp"
#include "submit/earlier_runs.hpp"
#include "base/text.hpp"

namespace ddpctl {

std::vector<std::string> cells_asked(const std::vector<std::string>& args, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& arg : args) {
    if (std::find(names.begin(), names.end(), arg) != names.end()) {
      out.push_back(arg);
      continue;
    }
    for (auto& part : split(arg, ';'))
      if (!part.empty()) out.push_back(part);
  }
  return out;
}

namespace {

// squeue's records of the sweep's arrays, and sacct's too when squeue has
// let a cell that ran go.
std::vector<Job> read_cell_records(const Run& run, SlurmClient& slurm) {
  std::vector<std::string> arrays = array_ids(run);
  std::vector<Job> records;
  if (arrays.empty()) return records;
  JobQuery q = slurm.jobs(arrays);
  if (!q.answered)
    throw UserError(fmt::format("cannot read the sweep's arrays from squeue: {}; nothing was submitted", q.error));
  records = q.jobs;
  bool missing = false;
  for (const auto& c : cell_states(run, records))
    if (c.attempt && c.job.state == JobState::Unknown) missing = true;
  if (missing) {
    JobQuery acc = slurm.accounting(arrays);
    records.insert(records.end(), acc.jobs.begin(), acc.jobs.end());
  }
  return records;
}

// One array per shape of exactly the chosen indices; returns how many
// arrays were not submitted.
int submit_retry(Run& run, std::map<std::string, std::vector<int>>& by_shape, bool dry_run, SlurmClient& slurm,
                 Output& out) {
  int failed = 0;
  long long max_size = dry_run ? 0 : max_array_size(slurm);
  std::string previous;  // max_parallel: 1 over several arrays: one after another
  const bool chained = run.grid->max_parallel == 1 && by_shape.size() > 1;
  for (auto& [label, indices] : by_shape) {
    std::sort(indices.begin(), indices.end());
    std::vector<std::string> names;
    for (int i : indices) names.push_back(run.grid->cells.at(static_cast<size_t>(i)).name);
    if (dry_run) {
      out.line(fmt::format("would retry shape {}: {} cell(s), --array={}: {}", label, indices.size(),
                           format_array(indices, run.grid->max_parallel), join(names, "; ")));
      continue;
    }
    const RunShape* shape = run.shape(label);
    if (!shape) throw UserError(Location{run.dir + "/run.json"}, "", "the sweep has no array of shape " + label);
    out.line(fmt::format("shape {}: retrying {} cell(s): {}", label, indices.size(), join(names, "; ")));
    failed += submit_grid_cells(run, *shape, indices, run.grid->max_parallel, max_size, slurm, out,
                                "retrying them as", chained ? &previous : nullptr);
  }
  return failed;
}

}  // namespace

RetryChoice choose_retry_cells(const Run& run, const std::vector<CellState>& cells,
                               const std::vector<std::string>& asked) {
  RetryChoice r;
  auto retryable = [](const CellState& c) {
    return !c.attempt || (is_terminal(c.job.state) && c.job.state != JobState::Completed);
  };
  if (asked.empty()) {
    for (const auto& c : cells)
      if (c.attempt && c.job.state == JobState::Unknown)
        r.problems.push_back(fmt::format("cell {} ({}): Slurm does not say how it ended", c.cell->name, c.shown_id));
      else if (retryable(c))
        r.chosen.push_back(&c);
  } else {
    std::vector<std::string> names;
    for (const auto& c : cells) names.push_back(c.cell->name);
    for (const auto& want : cells_asked(asked, names)) {
      auto it = std::find_if(cells.begin(), cells.end(), [&](const CellState& c) { return c.cell->name == want; });
      if (it == cells.end()) {
        r.problems.push_back(fmt::format("no cell {}{}", printable(want, 200), did_you_mean(want, names)));
      } else if (it->attempt && !is_terminal(it->job.state)) {
        r.problems.push_back(fmt::format("cell {} ({}) is {}: cancel it first (`ddpctl cancel {} --cell {}`)", want,
                                         it->shown_id, state_name(it->job.state), run.id, want));
      } else if (std::find(r.chosen.begin(), r.chosen.end(), &*it) == r.chosen.end()) {
        r.chosen.push_back(&*it);
      }
    }
  }
  for (const CellState* c : r.chosen)
    if (c->cell->shape.empty()) {  // a raced grid's cells run on the race's winner
      r.problems.push_back(fmt::format("cell {}: cell {}'s race has no winner{}, so there is no shape to run it on; "
                                       "`ddpctl sweep SPEC --again` races the shapes again",
                                       c->cell->name, run.grid->cells.at(0).name,
                                       c->waits_for_race ? " yet" : ""));
      break;
    }
  return r;
}

void retry_grid_cells(const RetryRequest& o, Context& ctx, Output& out) {
  Run run = find_run(o.runs_root, o.sweep);
  if (!run.grid)
    throw UserError(Location{run.dir}, "", fmt::format("run {} is not a grid's sweep; `ddpctl submit` runs a "
                                                      "single run again",
                                                      run.id));
  // Under the sweep's lock: a second retry waits, then sees this one's arrays.
  IdentityLock lock(o.runs_root, run.spec_hash, ctx, out);
  run = load_run(run.dir);
  // A raced grid's other cells go on the winner first, if nobody sent them yet.
  if (run.grid->raced && !o.dry_run && read_race(run).claimed()) continue_raced_grid(run, ctx, out, true);
  std::vector<CellState> cells = cell_states(run, read_cell_records(run, ctx.slurm));
  RetryChoice choice = choose_retry_cells(run, cells, o.cells);
  if (!choice.problems.empty()) {
    std::vector<Diagnostic> diags;
    for (auto& p : choice.problems) diags.push_back({Location{run.dir}, "", p + "; nothing was submitted"});
    throw UserError(diags);
  }
  if (choice.chosen.empty()) {
    out.line(fmt::format("sweep {}: no cell to retry ({})", run.id,
                         grid_summary(cells, run.grid->max_parallel)));
    return;
  }
  std::map<std::string, std::vector<int>> by_shape;
  for (const CellState* c : choice.chosen) by_shape[c->cell->shape].push_back(c->cell->index);
  if (o.preflight) check_retry_submit_limits(run, by_shape, ctx.slurm, out);
  int failed = submit_retry(run, by_shape, o.dry_run, ctx.slurm, out);
  if (failed)
    throw UserError(Location{run.dir + "/ledger.json"}, "",
                    fmt::format("{} retry array(s) were not submitted; `ddpctl status {}` shows the cells", failed,
                                run.id));
}

}  // namespace ddpctl
