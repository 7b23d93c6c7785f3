#include "cancel.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "experiments.hpp"
#include "jobs.hpp"
#include "submit.hpp"

namespace ddpctl {

void cancel_jobs(const CancelRequest& req, Context& ctx, Output& out) {
  std::vector<Run> runs;
  std::vector<JobRef> refs = resolve_targets(req.targets, req.runs_root, runs);
  // Every job carrying one of the runs' tokens is theirs, recorded or not: a
  // job whose sbatch answer was lost, or that appeared after it was judged
  // absent, is adopted into the ledger and cancelled with the rest.
  // Only runs with such attempts need the user's whole queue.
  bool jobless = std::any_of(runs.begin(), runs.end(), [](const Run& run) {
    return std::any_of(run.attempts.begin(), run.attempts.end(), [](const Attempt& a) {
      return a.outcome != Outcome::Submitted && a.outcome != Outcome::Rejected;
    });
  });
  if (jobless) {
    JobQuery queue = ctx.slurm.queue();
    if (!queue.answered) throw UserError("cannot cancel: Slurm could not be asked (" + queue.error + ")");
    int adopted = 0;
    for (auto& run : runs) adopted += adopt_found_jobs(run, queue.jobs);
    if (adopted > 0) {
      runs.clear();
      refs = resolve_targets(req.targets, req.runs_root, runs);
    }
  }
  if (refs.empty()) throw UserError("no jobs to cancel: the runs named have no submitted jobs");

  std::vector<std::string> ids;
  for (const auto& r : refs) ids.push_back(r.job_id);
  // scancel of an id Slurm does not know exits 0 silently, so ask first;
  // a job whose end its ledger holds is not asked about.
  JobStates before = lookup_run_jobs(ctx.slurm, runs, ids, ctx.clock.now());
  refs.clear();  // its attempts were re-read
  if (!before.queue_answered) throw UserError("cannot cancel: Slurm could not be asked (" + before.error + ")");
  std::vector<std::string> live;
  std::vector<std::string> failed;
  for (const auto& id : ids) {
    const Job& job = before.jobs.at(id);
    if (is_terminal(job.state))
      out.line(fmt::format("job {}: already ended ({})", id, state_name(job.state)));
    else if (job.state == JobState::Unknown)
      failed.push_back(fmt::format("job {}: {}; nothing was cancelled", id, job.reason));
    else
      live.push_back(id);
  }
  auto report = [&failed] {
    if (failed.empty()) return;
    std::vector<Diagnostic> diags;
    for (const auto& f : failed) diags.push_back({Location{}, "", f});
    throw UserError(diags);
  };
  if (live.empty()) return report();

  // Record the request before scancel runs.
  auto is_live = [&live](const Attempt& a) { return std::find(live.begin(), live.end(), a.job_id) != live.end(); };
  for (auto& run : runs)
    if (std::any_of(run.attempts.begin(), run.attempts.end(), is_live))
      update_ledger(run, [&](std::vector<Attempt>& attempts) {
        for (auto& a : attempts)
          if (is_live(a)) a.cancel_requested_at = utc_now_iso();
      });
  CommandResult r = ctx.slurm.cancel(live);
  if (!r.ok()) throw UserError("scancel failed: " + r.describe());

  // Confirm: every job must reach a terminal state (or leave the queue).
  std::vector<std::string> left = live;
  double deadline = ctx.clock.monotonic() + req.confirm_s;
  while (!left.empty()) {
    JobStates after = lookup_jobs(ctx.slurm, left);
    std::vector<std::string> still;
    for (const auto& id : left) {
      const Job& job = after.jobs.at(id);
      if (is_terminal(job.state))
        out.state_line(fmt::format("job {}: ", id), state_name(job.state), tone_of(job.state));
      else
        still.push_back(id);
    }
    left = still;
    if (left.empty()) break;
    if (ctx.clock.monotonic() > deadline) {
      for (const auto& id : left)
        failed.push_back(fmt::format("job {} is still {} {:.0f} s after scancel", id, state_name(after.jobs.at(id).state),
                                     req.confirm_s));
      break;
    }
    ctx.clock.sleep(0.5);
  }
  report();
}

}  // namespace ddpctl
