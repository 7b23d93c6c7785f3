#include "race/race_waiting.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>

#include "base/diagnostics.hpp"
#include "explain/race.hpp"
#include "runs/race_gate_files.hpp"
#include "runs/runs_index.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

bool requeued(const Job& job) { return job.state == JobState::Pending || job.state == JobState::RequeueHold; }

std::vector<Run> race_runs(const std::string& root, const std::vector<std::string>& targets, long long now,
                           bool grids) {
  auto wanted = [grids](const std::string& dir) {
    std::error_code ec;
    // race_dir: only race groups re-race; grid.json: only grids continue.
    return fs::is_directory(dir + "/race", ec) && (!grids || fs::exists(dir + "/grid.json", ec));
  };
  if (targets.empty()) return recent_runs(root, now - kRecentRunsS, wanted).runs;
  std::vector<Run> runs;
  for (const auto& t : targets) {
    try {
      Run run = find_run(root, t);
      // A run named twice (by name and by a job id of its) counts once.
      bool seen = std::any_of(runs.begin(), runs.end(), [&](const Run& r) { return r.dir == run.dir; });
      if (!seen && wanted(run.dir)) runs.push_back(std::move(run));
    } catch (const UserError&) {
      // a job id or an experiment: status reads those itself
    }
  }
  return runs;
}

std::vector<RequeuedWinner> requeued_winners(std::vector<Run>& runs, SlurmClient& slurm) {
  // Only groups that may still re-race, and one squeue for all their winners.
  std::vector<RequeuedWinner> candidates;
  std::vector<std::string> ids;
  for (auto& run : runs) {
    RaceState race = read_race(run);
    if (!race.is_race || !race.winner() || run.grid) continue;
    const RunShape* shape = run.shape(race.winner()->label);
    if (!shape || race.generations.size() >= static_cast<size_t>(1 + shape->max_requeues)) continue;
    // A winner whose end is recorded can no longer be requeued (job_states.hpp).
    if (const Attempt* a = job_attempt(run, race.winner()->job_id); a && a->end) continue;
    candidates.push_back({&run, race.winner()->job_id});
    ids.push_back(race.winner()->job_id);
  }
  std::vector<RequeuedWinner> found;
  if (candidates.empty()) return found;
  JobStates states = lookup_jobs(slurm, ids);
  for (const auto& c : candidates)
    if (requeued(states.jobs.at(c.job_id))) found.push_back(c);
  return found;
}

std::vector<Run*> grids_awaiting_cells(std::vector<Run>& runs, double claimed_before) {
  std::vector<Run*> found;
  for (Run& run : runs) {
    if (!run.grid || !run.grid->raced) continue;
    // Only where there is work: a winner, no attempt but the race's, and no
    // cancel (continue_raced_grid says why not in each case).
    if (std::any_of(run.attempts.begin(), run.attempts.end(),
                    [](const Attempt& a) { return !a.race || !a.cancel_requested_at.empty(); }))
      continue;
    RaceState race = read_race(run);
    if (race.generations.empty() || !race.generations.front().winner) continue;
    double claimed = race.generations.front().winner->at;
    // One site of a race across sites: the winner goes on from its gate.
    if (GateState gate = read_gate(run); gate.is_gate) {
      auto passed = std::find_if(gate.passed.begin(), gate.passed.end(), [&](const RaceEvent& e) {
        return e.job_id == race.generations.front().winner->job_id;
      });
      if (passed == gate.passed.end()) continue;
      claimed = passed->at;
    }
    if (claimed_before > 0 && claimed >= claimed_before) continue;
    found.push_back(&run);
  }
  return found;
}

std::vector<std::string> waiting_act_notes(const std::string& root, const std::vector<std::string>& targets,
                                           long long now, SlurmClient& slurm) {
  std::vector<std::string> notes;
  std::vector<Run> races = race_runs(root, targets, now, false);
  for (const auto& w : requeued_winners(races, slurm))
    notes.push_back(fmt::format("run {}: the race's winner, job {}, was requeued and waits; `ddpctl race-again {}` "
                                "races the other shapes again (status only reads)",
                                w.run->id, w.job_id, w.run->id));
  std::vector<Run> grids = race_runs(root, targets, now, true);
  for (const Run* run : grids_awaiting_cells(grids, static_cast<double>(now) - kGridContinueGraceS)) {
    RaceState race = read_race(*run);
    const RaceEvent& winner = *race.generations.front().winner;
    notes.push_back(fmt::format("sweep {}: cell {}'s race was won by shape {} (job {}), but its other {} cell(s) "
                                "are not submitted (the job's `sweep continue` did not run: see its .err log); "
                                "`ddpctl sweep continue {}` submits them (status only reads)",
                                run->id, run->grid->cells.at(0).name, winner.label, winner.job_id,
                                run->grid->cells.size() - 1, run->id));
  }
  return notes;
}

}  // namespace ddpctl
