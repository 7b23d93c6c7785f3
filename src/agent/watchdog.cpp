#include "agent/watchdog.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "base/json_fields.hpp"
#include "runs/job_files.hpp"
#include "base/files.hpp"
#include "runs/job_states.hpp"
#include "base/text.hpp"

namespace ddpctl {

StallWatch::StallWatch(double stall_after_s, double started_at, double busy_pct)
    : stall_after_(stall_after_s), last_progress_(started_at), busy_pct_(busy_pct) {}

namespace {

std::string reading_text(const std::pair<double, long long>& r) {
  return r.second >= 0 ? fmt::format("epoch {:g} step {}", r.first, r.second) : fmt::format("epoch {:g}", r.first);
}

}  // namespace

StallVerdict StallWatch::observe(const Observation& o) {
  StallVerdict v;
  // What counts as progress, the strongest signal the program gives.
  std::optional<std::pair<double, long long>> best;
  double best_mtime = 0;
  for (const auto& t : o.tasks)
    if (t.progress && (!best || *t.progress > *best)) best = t.progress, best_mtime = t.out_mtime;
  if (o.progress_mtime) {
    v.basis = "the progress file";
    if (!progress_mtime_ || *o.progress_mtime != *progress_mtime_) {
      progress_mtime_ = o.progress_mtime;
      last_progress_ = std::max(last_progress_, std::min(*o.progress_mtime, o.now));
    }
  } else if (best || pattern_seen_) {
    v.basis = "the progress pattern";
    pattern_seen_ = true;
    if (best && (!best_reading_ || *best > *best_reading_)) {
      best_reading_ = best;
      last_progress_ = std::max(last_progress_, std::min(best_mtime > 0 ? best_mtime : o.now, o.now));
    }
  } else {
    v.basis = "output or CPU time";
    for (const auto& t : o.tasks) {
      if (t.out_mtime > out_mtime_) {
        out_mtime_ = t.out_mtime;
        last_progress_ = std::max(last_progress_, std::min(t.out_mtime, o.now));
      }
      if (t.cpu_pct && *t.cpu_pct > busy_pct_) last_progress_ = o.now;
    }
  }
  v.since = last_progress_;
  v.for_s = std::max(0.0, o.now - last_progress_);
  v.stalled = v.for_s >= stall_after_;
  if (!v.stalled) return v;

  // Which tasks stopped first: behind the others by the progress pattern,
  // else silent for longer than the others. A task waiting in a collective
  // for a stopped one is not named; when nothing tells them apart, none is.
  std::string detail;
  auto stopped = [](const TaskObservation& t) { return StoppedTask{t.task, t.rank, t.node}; };
  if (best) {
    // Only tasks that print progress are compared (often rank 0 alone does).
    std::vector<const TaskObservation*> behind;
    for (const auto& t : o.tasks)
      if (t.progress && *t.progress < *best) behind.push_back(&t);
    if (!behind.empty()) {
      auto lowest = *behind.front()->progress;
      for (const auto* t : behind) {
        v.stopped.push_back(stopped(*t));
        lowest = std::min(lowest, *t->progress);
      }
      detail = describe_tasks(v.stopped) + " stopped at " + reading_text(lowest) + "; the others reached " +
               reading_text(*best);
    }
  }
  if (v.stopped.empty() && o.tasks.size() > 1) {
    double newest = 0;
    for (const auto& t : o.tasks) newest = std::max(newest, t.out_mtime);
    std::vector<const TaskObservation*> silent;
    for (const auto& t : o.tasks)
      // A task that never printed tells nothing (often only rank 0 prints).
      if (t.out_mtime > 0 && t.out_mtime < newest - 1.0) silent.push_back(&t);
    if (!silent.empty() && 2 * silent.size() <= o.tasks.size()) {
      double latest_silent = 0;
      for (const auto* t : silent) {
        v.stopped.push_back(stopped(*t));
        latest_silent = std::max(latest_silent, t->out_mtime);
      }
      detail = fmt::format("{} wrote {} last output {} before the others", describe_tasks(v.stopped),
                           v.stopped.size() == 1 ? "its" : "their", format_duration(std::llround(newest - latest_silent)));
    }
  }
  std::vector<StoppedTask> busy;
  for (const auto& t : o.tasks)
    if (t.cpu_pct && *t.cpu_pct > busy_pct_) busy.push_back(stopped(t));
  if (!busy.empty()) detail += (detail.empty() ? "" : "; ") + describe_tasks(busy) + " still using CPU (spinning?)";
  v.detail = detail.empty() ? std::string("no rank stands out") : detail;
  v.why = fmt::format("no progress ({}) for {}: {}", v.basis, format_duration(std::llround(v.for_s)), v.detail);
  return v;
}

}  // namespace ddpctl
