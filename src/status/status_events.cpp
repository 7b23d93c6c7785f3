#include "status/status_events.hpp"

#include "runs/events.hpp"
#include "runs/runs_index.hpp"

namespace ddpctl {

void say_job_ended(const Run& run, const Attempt& a, const StatusRow& row, const std::string& cell) {
  const std::string job = row.job.empty() ? a.job_id : row.job;
  nlohmann::json fields = {{"job", job}, {"shape", a.shape}, {"state", row.state}, {"reason", row.info}};
  if (!cell.empty()) fields["cell"] = cell;
  if (!a.cluster.empty()) fields["cluster"] = a.cluster;
  try {
    append_event_once(run.dir, "ended." + job, EventType::Ended, fields);
  } catch (const std::exception&) {
    // A run folder status cannot write (another user's): its events stay as they are.
  }
}

void say_run_ended(const Run& run) {
  // A run whose first intent is not recorded yet has not ended: it begins.
  if (run.attempts.empty() || !run_ended_at(run)) return;
  try {
    append_event_once(run.dir, "run_ended", EventType::RunEnded, {{"name", run.name}});
  } catch (const std::exception&) {
  }
}

}  // namespace ddpctl
