#include "agent/watchdog.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "base/json_fields.hpp"
#include "runs/job_files.hpp"
#include "base/files.hpp"
#include "runs/jobs.hpp"
#include "base/text.hpp"

namespace ddpctl {

StallWatch::StallWatch(double stall_after_s, double started_at, double busy_pct)
    : stall_after_(stall_after_s), last_progress_(started_at), busy_pct_(busy_pct) {}

namespace {

std::string reading_text(const std::pair<double, long long>& r) {
  return r.second >= 0 ? fmt::format("epoch {:g} step {}", r.first, r.second) : fmt::format("epoch {:g}", r.first);
}

std::string task_name(const StoppedTask& t) {
  return t.rank ? fmt::format("rank {}", *t.rank) : fmt::format("task {}", t.task);
}

}  // namespace

std::string describe_tasks(const std::vector<StoppedTask>& t) {
  if (t.empty()) return "";
  if (t.size() == 1) return task_name(t[0]) + (t[0].node.empty() ? "" : " (" + t[0].node + ")");
  bool ranks = std::all_of(t.begin(), t.end(), [](const StoppedTask& x) { return x.rank.has_value(); });
  std::vector<std::string> ids, nodes;
  for (const auto& x : t) {
    ids.push_back(std::to_string(ranks ? *x.rank : x.task));
    if (!x.node.empty() && std::find(nodes.begin(), nodes.end(), x.node) == nodes.end()) nodes.push_back(x.node);
  }
  return fmt::format("{} {}{}", ranks ? "ranks" : "tasks", join(ids, ", "),
                     nodes.empty() ? "" : " (" + join(nodes, ", ") + ")");
}

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

std::string stall_record_path(const std::string& log_base) { return job_files::stall_record(log_base); }

nlohmann::json stall_record_json(const StallRecord& r) {
  nlohmann::json stopped = nlohmann::json::array();
  for (const auto& t : r.stopped)
    stopped.push_back({{"task", t.task}, {"rank", t.rank ? nlohmann::json(*t.rank) : nlohmann::json()}, {"node", t.node}});
  return {{"attempt", r.attempt},
          {"stalled", r.stalled},
          {"since", r.since},
          {"detected_at", r.detected_at},
          {"for_s", r.for_s},
          {"stall_after_s", r.stall_after_s},
          {"action", r.action},
          {"taken", watchdog_outcome_text(r.taken)},
          {"step", r.step},
          {"result", r.result},
          {"why", r.why},
          {"basis", r.basis},
          {"detail", r.detail},
          {"stopped", stopped},
          {"stacks", r.stacks},
          {"culprit", r.culprit},
          {"culprit_named", r.culprit_named},
          {"stacks_by", r.stacks_by},
          {"flight_recorder", r.flight_recorder},
          {"flight_recorder_count", r.flight_recorder_count},
          {"flight_recorder_named", r.flight_recorder_named},
          {"flight_recorder_dumps", r.flight_recorder_dumps},
          {"resumed_at", r.resumed_at ? nlohmann::json(*r.resumed_at) : nlohmann::json()}};
}

std::optional<StallRecord> read_stall_record(const std::string& log_base) try {
  std::string text;
  try {
    text = read_file(stall_record_path(log_base));
  } catch (const std::exception&) {
    return std::nullopt;
  }
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  StallRecord r;
  auto num = [&](const char* k) { return json_field::number(j, k).value_or(0.0); };
  auto str = [&](const char* k) { return json_field::string(j, k).value_or(""); };
  r.attempt = static_cast<int>(num("attempt"));
  r.stalled = j.value("stalled", false);
  r.since = num("since");
  r.detected_at = num("detected_at");
  r.for_s = num("for_s");
  r.stall_after_s = num("stall_after_s");
  r.action = str("action");
  // A word this version does not know is no act it can speak for.
  r.taken = parse_watchdog_outcome(str("taken")).value_or(WatchdogOutcome::None);
  r.step = static_cast<int>(num("step"));
  r.result = str("result");
  r.why = str("why");
  r.basis = str("basis");
  r.detail = str("detail");
  if (j.contains("stopped") && j["stopped"].is_array())
    for (const auto& t : j["stopped"]) {
      if (!t.is_object()) continue;
      StoppedTask s;
      s.task = t.value("task", 0);
      if (t.contains("rank") && t["rank"].is_number_integer()) s.rank = t["rank"].get<int>();
      s.node = t.value("node", "");
      r.stopped.push_back(s);
    }
  if (j.contains("stacks") && j["stacks"].is_array())
    for (const auto& s : j["stacks"])
      if (s.is_string()) r.stacks.push_back(s.get<std::string>());
  r.culprit = str("culprit");
  r.culprit_named = j.value("culprit_named", false);
  r.stacks_by = str("stacks_by");
  r.flight_recorder = str("flight_recorder");
  r.flight_recorder_count = str("flight_recorder_count");
  r.flight_recorder_named = j.value("flight_recorder_named", false);
  if (j.contains("flight_recorder_dumps") && j["flight_recorder_dumps"].is_array())
    for (const auto& d : j["flight_recorder_dumps"])
      if (d.is_string()) r.flight_recorder_dumps.push_back(d.get<std::string>());
  r.resumed_at = json_field::number(j, "resumed_at");
  return r;
} catch (const nlohmann::json::exception&) {
  return std::nullopt;  // a record edited by hand, or of another version
}

std::string describe_stall(const StallRecord& r, std::optional<double> for_s) {
  std::string dur = format_duration(std::llround(for_s.value_or(r.for_s)));
  std::string s;
  std::string fr_count = r.flight_recorder_count.empty() ? "" : ", " + r.flight_recorder_count;
  if (r.culprit_named) s = fmt::format("stalled {}: {}", dur, r.culprit);
  else if (r.flight_recorder_named) s = fmt::format("stalled {}: {} (flight recorder{})", dur, r.flight_recorder, fr_count);
  else if (r.detail.empty()) s = fmt::format("stalled {}: {}", dur, r.why);
  else s = fmt::format("stalled {} (no progress in {}): {}", dur, r.basis, r.detail);
  if (!r.stacks.empty()) s += "; stacks in " + join(r.stacks, ", ");
  // Why the stacks name nobody, after where they are (status cuts a long line).
  if (!r.culprit_named && !r.culprit.empty()) s += (r.stacks.empty() ? "; stacks: " : ": ") + r.culprit;
  // Beside the stacks' culprit, or why none: what the Flight Recorder says.
  if (!r.flight_recorder_named && !r.flight_recorder.empty())
    s += fmt::format("; flight recorder{}: {}", r.flight_recorder_count.empty() ? "" : " (" + r.flight_recorder_count + ")",
                     r.flight_recorder);
  if (!r.stacks_by.empty()) s += "; stacks taken by " + r.stacks_by;
  return s;
}

std::vector<Hint> usage_hints(const std::map<std::string, std::vector<UsageSample>>& samples, double now,
                              double window_s) {
  std::vector<Hint> hints;
  for (const auto& [node, all] : samples) {
    std::vector<const UsageSample*> w;
    for (const auto& s : all)
      if (s.t >= now - window_s && s.t <= now + 60) w.push_back(&s);
    if (w.size() < 3 || w.back()->t - w.front()->t < window_s / 2) continue;  // too little to judge
    const UsageSample& last = *w.back();

    // Input-bound: the GPUs wait while the CPUs are saturated.
    double util = 0, cpu = 0;
    int gpu_points = 0, cpu_points = 0;
    for (const auto* s : w) {
      for (const auto& g : s->gpus) util += g.util_pct, gpu_points++;
      if (s->cpu_pct) cpu += *s->cpu_pct, cpu_points++;
    }
    if (gpu_points > 0 && cpu_points > 0 && last.cpus > 0) {
      util /= gpu_points;
      cpu /= cpu_points;
      if (util < 50 && cpu >= 90.0 * last.cpus)
        hints.push_back({"input-bound", node,
                         fmt::format("input-bound on {}: GPUs {:.0f}% busy while the job's {} CPUs are saturated "
                                     "({:.0f}%) for {}; raise `workers` (data loader processes) or the CPUs per task",
                                     node, util, last.cpus, cpu, format_duration(std::llround(w.back()->t - w.front()->t)))});
    }

    // Memory climbing towards the job's limit (else the node's memory).
    long long limit = last.mem_limit_bytes > 0 ? last.mem_limit_bytes : last.mem_total_bytes;
    if (limit > 0 && last.rss_bytes >= limit * 85 / 100) {
      const UsageSample& first = *w.front();
      double minutes = (last.t - first.t) / 60;
      double rate = minutes > 0 ? static_cast<double>(last.rss_bytes - first.rss_bytes) / minutes : 0;
      std::string trend;
      if (rate > 0.01 * static_cast<double>(limit))
        trend = fmt::format(" and rising {}/min: the limit is reached in ~{}", format_bytes(std::llround(rate)),
                            format_duration(std::llround(60 * static_cast<double>(limit - last.rss_bytes) / rate)));
      hints.push_back({"memory", node,
                       fmt::format("memory on {}: {} of {} ({}){}; an OOM kill ends the job there", node,
                                   format_bytes(last.rss_bytes), format_bytes(limit),
                                   last.mem_limit_bytes > 0 ? "the job's limit" : "the node's memory", trend)});
    }
    for (const auto& g : last.gpus)
      if (g.mem_total_mib > 0 && g.mem_used_mib >= 0.95 * g.mem_total_mib)
        hints.push_back({"gpu-memory", node,
                         fmt::format("GPU {} on {}: {:.1f} of {:.1f} GiB used; a larger batch runs out of memory", g.index,
                                     node, g.mem_used_mib / 1024, g.mem_total_mib / 1024)});
  }
  return hints;
}

}  // namespace ddpctl
