#include "submit/cancel.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <set>

#include "explain/experiments.hpp"
#include "runs/events.hpp"
#include "runs/job_states.hpp"
#include "explain/status_grid.hpp"
#include "base/text.hpp"
#include "submit/submit_attempt.hpp"

namespace ddpctl {

namespace {

// The cancel asked, recorded before scancel runs: in the ledger of each
// array with a watched cell (or a racing shape), and as events.
void record_cell_cancels(Run& run, const std::vector<std::string>& targets, const std::vector<std::string>& watched,
                         const std::vector<std::string>& racing) {
  update_ledger(run, [&](std::vector<Attempt>& attempts) {
    for (auto& a : attempts)
      if (!a.array.empty() && (std::find(racing.begin(), racing.end(), a.job_id) != racing.end() ||
                               std::any_of(watched.begin(), watched.end(), [&](const std::string& w) {
                                 return w.rfind(a.job_id + "_", 0) == 0;
                               })))
        a.cancel_requested_at = utc_now_iso();
  });
  for (const auto& t : targets) try_append_event(run.dir, EventType::CancelAsked, {{"job", t}});
}

// A grid's sweeps (status_grid.hpp): scancel of each array with a live cell
// (or of the named cells' tasks, A_i), recorded first, then confirmed from
// one squeue of the arrays per look. Unconfirmed cells go into `failed`.
void cancel_grid_cells(const std::vector<Run*>& sweeps, const std::vector<std::string>& cells, double confirm_s,
                       Context& ctx, Output& out, std::vector<std::string>& failed) {
  std::vector<std::string> arrays;
  for (const Run* run : sweeps)
    for (const auto& id : array_ids(*run)) arrays.push_back(id);
  if (arrays.empty()) return;
  JobQuery q = ctx.slurm.jobs(arrays);
  if (!q.answered) throw UserError("cannot cancel: Slurm could not be asked (" + q.error + ")");
  std::vector<std::string> targets, watched;  // scancel's ids; the cells ("A_i") to see end
  std::vector<std::string> names, found, racing;
  for (Run* run : sweeps) {
    std::set<std::string> whole;  // arrays cancelled whole
    const size_t first_target = targets.size();
    for (const auto& c : cell_states(*run, q.jobs)) {
      names.push_back(c.cell->name);
      bool named = std::find(cells.begin(), cells.end(), c.cell->name) != cells.end();
      if (named) found.push_back(c.cell->name);
      if (!cells.empty() && !named) continue;
      // A cell squeue no longer lists (Unknown here) has ended.
      if (!c.attempt || is_terminal(c.job.state) || c.job.state == JobState::Unknown) {
        if (named || c.attempt)
          out.line(fmt::format("cell {} ({}): already ended ({})", c.cell->name, c.shown_id.empty() ? "-" : c.shown_id,
                               c.attempt ? state_name(c.job.state) : "never submitted"));
        continue;
      }
      watched.push_back(c.shown_id);
      if (!cells.empty())
        targets.push_back(c.shown_id);
      else if (whole.insert(c.attempt->job_id).second)
        targets.push_back(c.attempt->job_id);
      // A raced first cell still racing: every shape's job goes (the race
      // then has no winner, and its other cells are never submitted).
      for (const Attempt* a : c.racing)
        if (a != c.attempt && whole.insert(a->job_id).second) {
          targets.push_back(a->job_id);
          racing.push_back(a->job_id);
        }
    }
    if (targets.empty()) continue;
    record_cell_cancels(*run, {targets.begin() + static_cast<long>(first_target), targets.end()}, watched, racing);
  }
  for (const auto& want : cells)
    if (std::find(found.begin(), found.end(), want) == found.end())
      throw UserError(Location{"--cell"}, "", fmt::format("no cell {}{}; nothing was cancelled", printable(want, 200),
                                                          did_you_mean(want, names)));
  if (targets.empty()) return;
  CommandResult r = ctx.slurm.cancel(targets);
  if (!r.ok()) throw UserError("scancel failed: " + r.describe());
  double deadline = ctx.clock.monotonic() + confirm_s;
  while (!watched.empty()) {
    JobQuery now = ctx.slurm.jobs(arrays);
    std::vector<std::string> still;
    for (const Run* run : sweeps)
      for (const auto& c : cell_states(*run, now.jobs)) {
        if (std::find(watched.begin(), watched.end(), c.shown_id) == watched.end()) continue;
        if (now.answered && (is_terminal(c.job.state) || c.job.state == JobState::Unknown))
          out.state_line(fmt::format("cell {} ({}): ", c.cell->name, c.shown_id),
                         c.job.state == JobState::Unknown ? "ENDED" : state_name(c.job.state),
                         tone_of(c.job.state == JobState::Unknown ? JobState::Cancelled : c.job.state));
        else
          still.push_back(c.shown_id);
      }
    watched = still;
    if (watched.empty()) break;
    if (ctx.clock.monotonic() > deadline) {
      for (const auto& id : watched)
        failed.push_back(fmt::format("job {} has not ended {:.0f} s after scancel", id, confirm_s));
      break;
    }
    ctx.clock.sleep(0.5);
  }
}

// The failures, together, as one UserError.
void throw_if_failed(const std::vector<std::string>& failed) {
  if (failed.empty()) return;
  std::vector<Diagnostic> diags;
  for (const auto& f : failed) diags.push_back({Location{}, "", f});
  throw UserError(diags);
}

// Every job carrying one of the runs' tokens is theirs, recorded or not: a
// job whose sbatch answer was lost, or that appeared after it was judged
// absent, is adopted into the ledger and cancelled with the rest.
// Only runs with such attempts need the user's whole queue.
void adopt_unrecorded_jobs(const CancelRequest& req, std::vector<Run>& runs, std::vector<JobRef>& refs,
                           SlurmClient& slurm) {
  bool jobless = std::any_of(runs.begin(), runs.end(), [](const Run& run) {
    return std::any_of(run.attempts.begin(), run.attempts.end(), [](const Attempt& a) {
      return a.outcome != Outcome::Submitted && a.outcome != Outcome::Rejected;
    });
  });
  if (!jobless) return;
  JobQuery queue = slurm.queue();
  if (!queue.answered) throw UserError("cannot cancel: Slurm could not be asked (" + queue.error + ")");
  int adopted = 0;
  for (auto& run : runs) adopted += adopt_found_jobs(run, queue.jobs);
  if (adopted > 0) {
    runs.clear();
    refs = resolve_targets(req.targets, req.runs_root, runs);
  }
}

// Records the request in the ledgers of `runs`, before scancel runs.
void record_cancel_requests(std::vector<Run>& runs, const std::vector<std::string>& live) {
  auto is_live = [&live](const Attempt& a) { return std::find(live.begin(), live.end(), a.job_id) != live.end(); };
  for (auto& run : runs)
    if (std::any_of(run.attempts.begin(), run.attempts.end(), is_live))
    {
      update_ledger(run, [&](std::vector<Attempt>& attempts) {
        for (auto& a : attempts)
          if (is_live(a)) a.cancel_requested_at = utc_now_iso();
      });
      for (const auto& a : run.attempts)
        if (is_live(a)) try_append_event(run.dir, EventType::CancelAsked, {{"job", a.job_id}, {"shape", a.shape}});
    }
}

// Confirm: every job must reach a terminal state (or leave the queue)
// within `confirm_s`; those that do not are added to `failed`.
void confirm_ended(std::vector<std::string> left, double confirm_s, Context& ctx, Output& out,
                   std::vector<std::string>& failed) {
  double deadline = ctx.clock.monotonic() + confirm_s;
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
                                     confirm_s));
      break;
    }
    ctx.clock.sleep(0.5);
  }
}

}  // namespace

CancelTargets sort_cancel_targets(const std::vector<std::string>& ids, const JobStates& states) {
  CancelTargets t;
  for (const auto& id : ids) {
    const Job& job = states.jobs.at(id);
    if (is_terminal(job.state))
      t.ended.push_back(fmt::format("job {}: already ended ({})", id, state_name(job.state)));
    else if (job.state == JobState::Unknown)
      t.unknown.push_back(fmt::format("job {}: {}; nothing was cancelled", id, job.reason));
    else
      t.live.push_back(id);
  }
  return t;
}

void cancel_jobs(const CancelRequest& req, Context& ctx, Output& out) {
  std::vector<Run> runs;
  std::vector<JobRef> refs = resolve_targets(req.targets, req.runs_root, runs);
  // A grid's arrays are cancelled by cell (cancel_grid_cells), the rest as jobs.
  std::vector<std::string> failed;
  std::vector<Run*> sweeps;
  for (auto& run : runs)
    if (run.grid) sweeps.push_back(&run);
  if (!req.cells.empty() && sweeps.empty())
    throw UserError(Location{"--cell"}, "", "picks cells of a grid's sweep; the runs named have no grid");
  if (!sweeps.empty()) {
    cancel_grid_cells(sweeps, req.cells, req.confirm_s, ctx, out, failed);
    refs.erase(std::remove_if(refs.begin(), refs.end(),
                              [](const JobRef& r) { return r.attempt && !r.attempt->array.empty(); }),
               refs.end());
    if (refs.empty()) return throw_if_failed(failed);
  }
  adopt_unrecorded_jobs(req, runs, refs, ctx.slurm);
  if (refs.empty()) throw UserError("no jobs to cancel: the runs named have no submitted jobs");

  std::vector<std::string> ids;
  for (const auto& r : refs) ids.push_back(r.job_id);
  // scancel of an id Slurm does not know exits 0 silently, so ask first;
  // a job whose end its ledger holds is not asked about.
  JobStates before = lookup_run_jobs(ctx.slurm, runs, ids, ctx.clock.now());
  refs.clear();  // its attempts were re-read
  if (!before.queue_answered) throw UserError("cannot cancel: Slurm could not be asked (" + before.error + ")");
  CancelTargets targets = sort_cancel_targets(ids, before);
  for (const auto& line : targets.ended) out.line(line);
  failed.insert(failed.end(), targets.unknown.begin(), targets.unknown.end());
  if (targets.live.empty()) return throw_if_failed(failed);

  record_cancel_requests(runs, targets.live);
  CommandResult r = ctx.slurm.cancel(targets.live);
  if (!r.ok()) throw UserError("scancel failed: " + r.describe());
  confirm_ended(targets.live, req.confirm_s, ctx, out, failed);
  throw_if_failed(failed);
}

}  // namespace ddpctl
