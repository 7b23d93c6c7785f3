#include "sweep/grid_continuation.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <optional>

#include "explain/race.hpp"
#include "runs/race_gate_files.hpp"
#include "sweep/grid_array_submit.hpp"
#include "sweep/grid_arrays.hpp"
#include "race/race_again.hpp"
#include "submit/earlier_runs.hpp"

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
  // One site of a race across sites: this site's claim is not enough; the
  // rest goes on only after the coordinator's grant let the winner through.
  if (GateState gate = read_gate(run); gate.is_gate) {
    const bool through = std::any_of(gate.passed.begin(), gate.passed.end(),
                                     [&](const RaceEvent& e) { return e.job_id == winner.job_id; });
    if (!through) {
      result.why_not = fmt::format("cell {}'s race was won here by {}, but the run races other sites: the other cells "
                                   "go on only once the coordinator ({}) grants it and it goes through its gate",
                                   run.grid->cells.at(0).name, result.winner, gate.coordinator);
      return result;
    }
  }
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

}  // namespace ddpctl
