#include "submit/earlier_runs.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>

#include "runs/job_states.hpp"
#include "submit/submit_attempt.hpp"

namespace ddpctl {

EarlierRuns find_earlier_runs(const std::string& root, const std::string& identity, SlurmClient& slurm) {
  EarlierRuns out;
  std::vector<std::string> ids, arrays;
  std::map<std::string, std::string> run_of;
  std::optional<JobQuery> queue;  // asked once, only when an absent attempt may need it
  for (Run& run : list_runs(root)) {
    if (run.spec_hash != identity) continue;
    auto unsettled = settle_attempts(run, slurm);
    // "Absent" stays revisable: a job that appeared later (another login
    // node's sbatch, a controller slow to record it) is adopted, not doubled.
    bool any_absent = std::any_of(run.attempts.begin(), run.attempts.end(),
                                  [](const Attempt& a) { return a.outcome == Outcome::Absent; });
    if (any_absent) {
      if (!queue) queue = slurm.queue();
      if (queue->answered) adopt_found_jobs(run, queue->jobs);
    }
    if (!unsettled.empty()) {
      const Attempt& a = unsettled.front();
      throw UserError(Location{run.dir + "/ledger.json"}, "",
                      fmt::format("attempt {} (sbatch at {}) may or may not have created a job, and it cannot be "
                                  "checked now: {}. Not submitting again until it is settled; re-run this command "
                                  "when Slurm answers",
                                  a.token, a.intent_at, a.reason));
    }
    bool all_absent = !run.attempts.empty();
    for (const auto& a : run.attempts) {
      if (a.outcome != Outcome::Absent) all_absent = false;
      if (a.outcome == Outcome::Submitted && !a.end) {  // a recorded end is final (job_states.hpp)
        (a.array.empty() ? ids : arrays).push_back(a.job_id);
        run_of[a.job_id] = run.id;
      }
    }
    if (all_absent) out.retry = run;
  }
  // A job array is active while any of its records is: the one whose id is
  // the array's may be a task that ended while others run.
  if (!arrays.empty()) {
    JobQuery q = slurm.jobs(arrays);
    if (!q.answered)
      throw UserError(fmt::format("cannot tell whether job array {} (run {}) of this spec is still queued: {}",
                                  arrays.front(), run_of[arrays.front()], q.error));
    for (const Job& job : q.jobs)
      if (!is_terminal(job.state) && job.state != JobState::Unknown && run_of.count(submission_id(job))) {
        out.active = ActiveJob{run_of[submission_id(job)], submission_id(job)};
        return out;
      }
  }
  if (ids.empty()) return out;
  JobStates states = lookup_jobs(slurm, ids);
  for (const auto& id : ids) {
    const Job& job = states.jobs.at(id);
    if (!is_terminal(job.state) && job.state != JobState::Unknown) {
      out.active = ActiveJob{run_of[id], id};
      return out;
    }
    if (job.state == JobState::Unknown && !states.queue_answered)
      throw UserError(fmt::format("cannot tell whether job {} (run {}) of this spec is still queued: {}", id,
                                  run_of[id], states.error));
  }
  return out;
}

IdentityLock::IdentityLock(const std::string& root, const std::string& identity, Context& ctx, Output& out)
    : lock_(std::make_unique<FileLock>(identity_lock_path(root, identity), ctx.clock, [&out](const std::string& holder) {
        out.note(fmt::format("waiting for another ddpctl submitting the same run ({})", holder));
      })) {}

double IdentityLock::waited_s() const { return lock_->waited_s(); }

}  // namespace ddpctl
