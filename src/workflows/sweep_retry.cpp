// More cells into a grid's sweep once it was submitted (sweep_grid.hpp):
// `ddpctl sweep retry` (the cells that did not complete, as arrays of
// exactly their indices) and race, then sweep's continuation (the cells
// after the first, on the shape that won its race).
#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <optional>

#include "workflows/grid_limits.hpp"
#include "slurm/job_array.hpp"
#include "explain/race.hpp"
#include "workflows/race_again.hpp"
#include "explain/status_grid.hpp"
#include "workflows/submit.hpp"
#include "workflows/sweep_grid.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

GridContinuation continue_raced_grid(Run& given, Context& ctx, Output& out, bool locked) {
  GridContinuation result;
  if (!given.grid || !given.grid->raced) {
    result.why_not = fmt::format("run {} is not a raced grid's sweep", given.id);
    return result;
  }
  std::optional<IdentityLock> lock;
  if (!locked) lock.emplace(fs::path(given.dir).parent_path().string(), given.spec_hash, ctx, out);
  Run run = load_run(given.dir);
  RaceState race = read_race(run);
  // Generation 1 is the race of the grid's first cell (a raced grid does not race again).
  if (race.generations.empty() || !race.generations.front().winner) {
    result.why_not = fmt::format("cell {}'s race has no winner yet", run.grid->cells.at(0).name);
    return result;
  }
  const RaceEvent& winner = *race.generations.front().winner;
  result.winner = fmt::format("shape {} (job {})", winner.label, winner.job_id);
  for (const Attempt& a : run.attempts) {
    if (!a.race) {
      result.why_not = fmt::format("the other cells were already submitted on {} (job array {})", winner.label,
                                   a.job_id.empty() ? "not made: " + std::string(outcome_name(a.outcome)) : a.job_id);
      return result;
    }
    if (!a.cancel_requested_at.empty()) {
      result.why_not = fmt::format("the sweep was cancelled at {} while cell {} raced; nothing more is submitted "
                                   "(`ddpctl sweep retry {}` submits the cells)",
                                   a.cancel_requested_at, run.grid->cells.at(0).name, run.id);
      return result;
    }
  }
  const RunShape* shape = run.shape(winner.label);
  if (!shape) {
    result.why_not = fmt::format("the race's winner names shape {}, which the sweep does not have", winner.label);
    return result;
  }
  // Every cell runs on the winner's shape from now on (retry too).
  for (auto& c : run.grid->cells) c.shape = winner.label;
  save_grid(run);
  given.grid = run.grid;
  std::vector<int> rest = rest_of_grid(run.grid->cells.size());
  if (rest.empty()) {
    result.why_not = "the grid has one cell";
    return result;
  }
  forget_job_environment();  // inside the winning job: sbatch must not inherit its SLURM_* variables
  out.line(fmt::format("sweep {}: cell {}'s race was won by {}; submitting the other {} cell(s) on it", run.id,
                       run.grid->cells.at(0).name, result.winner, rest.size()));
  int failed = submit_grid_cells(run, *shape, rest, run.grid->max_parallel, max_array_size(ctx.slurm), ctx.slurm, out,
                            "submitted");
  result.submitted = failed == 0;
  if (failed) result.why_not = fmt::format("{} array(s) not submitted (recorded in {}/ledger.json)", failed, run.dir);
  given.attempts = run.attempts;
  return result;
}

int continue_raced_grids_in(const std::string& root, const std::vector<std::string>& targets, long long now,
                            Context& ctx, Output& out) {
  std::vector<Run> runs;
  auto raced_grid = [](const std::string& dir) {
    std::error_code ec;
    return fs::is_directory(dir + "/race", ec) && fs::exists(dir + "/grid.json", ec);
  };
  if (targets.empty()) {
    runs = recent_runs(root, now - kRecentRunsS, raced_grid).runs;
  } else {
    for (const auto& t : targets) {
      try {
        Run run = find_run(root, t);
        if (raced_grid(run.dir)) runs.push_back(std::move(run));
      } catch (const UserError&) {
        // a job id or an experiment
      }
    }
  }
  int done = 0;
  for (Run& run : runs) {
    if (!run.grid || !run.grid->raced) continue;
    // Only where there is work: a winner, and no attempt but the race's.
    if (std::any_of(run.attempts.begin(), run.attempts.end(), [](const Attempt& a) { return !a.race; })) continue;
    RaceState race = read_race(run);
    if (race.generations.empty() || !race.generations.front().winner) continue;
    if (continue_raced_grid(run, ctx, out).submitted) ++done;
  }
  return done;
}

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
  std::vector<std::string> arrays = array_ids(run);
  std::vector<Job> records;
  if (!arrays.empty()) {
    JobQuery q = ctx.slurm.jobs(arrays);
    if (!q.answered)
      throw UserError(fmt::format("cannot read the sweep's arrays from squeue: {}; nothing was submitted", q.error));
    records = q.jobs;
    bool missing = false;
    for (const auto& c : cell_states(run, records))
      if (c.attempt && c.job.state == JobState::Unknown) missing = true;
    if (missing) {
      JobQuery acc = ctx.slurm.accounting(arrays);
      records.insert(records.end(), acc.jobs.begin(), acc.jobs.end());
    }
  }
  std::vector<CellState> cells = cell_states(run, records);
  std::vector<const CellState*> chosen;
  std::vector<std::string> problems;
  auto retryable = [](const CellState& c) {
    return !c.attempt || (is_terminal(c.job.state) && c.job.state != JobState::Completed);
  };
  if (o.cells.empty()) {
    for (const auto& c : cells)
      if (c.attempt && c.job.state == JobState::Unknown)
        problems.push_back(fmt::format("cell {} ({}): Slurm does not say how it ended", c.cell->name, c.shown_id));
      else if (retryable(c))
        chosen.push_back(&c);
  } else {
    std::vector<std::string> names;
    for (const auto& c : cells) names.push_back(c.cell->name);
    for (const auto& want : cells_asked(o.cells, names)) {
      auto it = std::find_if(cells.begin(), cells.end(), [&](const CellState& c) { return c.cell->name == want; });
      if (it == cells.end()) {
        problems.push_back(fmt::format("no cell {}{}", printable(want, 200), did_you_mean(want, names)));
      } else if (it->attempt && !is_terminal(it->job.state)) {
        problems.push_back(fmt::format("cell {} ({}) is {}: cancel it first (`ddpctl cancel {} --cell {}`)", want,
                                       it->shown_id, state_name(it->job.state), run.id, want));
      } else if (std::find(chosen.begin(), chosen.end(), &*it) == chosen.end()) {
        chosen.push_back(&*it);
      }
    }
  }
  for (const CellState* c : chosen)
    if (c->cell->shape.empty()) {  // a raced grid's cells run on the race's winner
      problems.push_back(fmt::format("cell {}: cell {}'s race has no winner{}, so there is no shape to run it on; "
                                     "`ddpctl sweep SPEC --again` races the shapes again",
                                     c->cell->name, run.grid->cells.at(0).name,
                                     c->waits_for_race ? " yet" : ""));
      break;
    }
  if (!problems.empty()) {
    std::vector<Diagnostic> diags;
    for (auto& p : problems) diags.push_back({Location{run.dir}, "", p + "; nothing was submitted"});
    throw UserError(diags);
  }
  if (chosen.empty()) {
    out.line(fmt::format("sweep {}: no cell to retry ({})", run.id,
                         grid_summary(cells, run.grid->max_parallel)));
    return;
  }
  // One array per shape, of exactly the chosen indices.
  std::map<std::string, std::vector<int>> by_shape;
  for (const CellState* c : chosen) by_shape[c->cell->shape].push_back(c->cell->index);
  if (o.preflight) check_retry_submit_limits(run, by_shape, ctx.slurm, out);
  int failed = 0;
  long long max_size = o.dry_run ? 0 : max_array_size(ctx.slurm);
  std::string previous;  // max_parallel: 1 over several arrays: one after another
  const bool chained = run.grid->max_parallel == 1 && by_shape.size() > 1;
  for (auto& [label, indices] : by_shape) {
    std::sort(indices.begin(), indices.end());
    std::vector<std::string> names;
    for (int i : indices) names.push_back(run.grid->cells.at(static_cast<size_t>(i)).name);
    if (o.dry_run) {
      out.line(fmt::format("would retry shape {}: {} cell(s), --array={}: {}", label, indices.size(),
                           format_array(indices, run.grid->max_parallel), join(names, "; ")));
      continue;
    }
    const RunShape* shape = run.shape(label);
    if (!shape) throw UserError(Location{run.dir + "/run.json"}, "", "the sweep has no array of shape " + label);
    out.line(fmt::format("shape {}: retrying {} cell(s): {}", label, indices.size(), join(names, "; ")));
    failed += submit_grid_cells(run, *shape, indices, run.grid->max_parallel, max_size, ctx.slurm, out, "retrying them as",
                           chained ? &previous : nullptr);
  }
  if (failed)
    throw UserError(Location{run.dir + "/ledger.json"}, "",
                    fmt::format("{} retry array(s) were not submitted; `ddpctl status {}` shows the cells", failed,
                                run.id));
}

}  // namespace ddpctl
