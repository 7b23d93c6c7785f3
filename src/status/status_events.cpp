#include "status/status_events.hpp"

#include <algorithm>

#include "runs/events.hpp"
#include "runs/runs_index.hpp"

namespace ddpctl {

void say_job_ended(const Run& run, const Attempt& a, const Job& slurm_job, const StatusRow& row,
                   const std::string& cell) {
  const std::string job = row.job.empty() ? a.job_id : row.job;
  nlohmann::json fields = {{"job", job}, {"shape", a.shape}, {"state", row.state}, {"reason", row.info}};
  if (!cell.empty()) fields["cell"] = cell;
  if (!a.cluster.empty()) fields["cluster"] = a.cluster;
  try {
    append_event_once(run.dir, "ended." + job + "." + std::to_string(slurm_job.requeues), EventType::Ended, fields);
  } catch (const std::exception&) {
    // A run folder status cannot write (another user's): its events stay as they are.
  }
}

namespace {

bool attempt_over(const Attempt& a, const JobStates& states, bool cells_over) {
  if (a.outcome == Outcome::Intent || a.outcome == Outcome::Unconfirmed) return false;
  if (a.outcome != Outcome::Submitted || a.end) return true;
  if (!a.array.empty()) return cells_over;
  auto it = states.jobs.find(a.job_id);
  return it != states.jobs.end() && is_terminal(it->second.state);
}

}  // namespace

void say_run_ended(const Run& run, const JobStates& states, bool cells_over) {
  // A run whose first intent is not recorded yet has not ended: it begins.
  if (run.attempts.empty()) return;
  if (!run_ended_at(run) && !std::all_of(run.attempts.begin(), run.attempts.end(), [&](const Attempt& a) {
        return attempt_over(a, states, cells_over);
      }))
    return;
  try {
    append_event_once(run.dir, "run_ended", EventType::RunEnded, {{"name", run.name}});
  } catch (const std::exception&) {
  }
}

}  // namespace ddpctl
