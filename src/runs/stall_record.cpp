#include "runs/stall_record.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "base/files.hpp"
#include "base/json_fields.hpp"
#include "base/text.hpp"
#include "runs/job_files.hpp"

namespace ddpctl {

namespace {

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

}  // namespace ddpctl
