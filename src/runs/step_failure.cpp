#include "runs/step_failure.hpp"

#include <cctype>

#include "base/regex.hpp"
#include "runs/task_logs.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace {

const std::vector<std::pair<StepFailureKind, const char*>>& kind_names() {
  static const std::vector<std::pair<StepFailureKind, const char*>> names = {
      {StepFailureKind::TaskExited, "task-exited"}, {StepFailureKind::TaskKilled, "task-killed"},
      {StepFailureKind::NodeLost, "node-lost"},     {StepFailureKind::NodeCheck, "node-check"},
      {StepFailureKind::Stalled, "stalled"},        {StepFailureKind::Unknown, "unknown"}};
  return names;
}

}  // namespace

std::string step_failure_kind_name(StepFailureKind k) {
  for (const auto& [kind, name] : kind_names())
    if (kind == k) return name;
  return "unknown";
}

StepFailureKind parse_step_failure_kind(const std::string& s) {
  for (const auto& [kind, name] : kind_names())
    if (s == name) return kind;
  return StepFailureKind::Unknown;
}

std::vector<StepFailure> parse_step_end(const std::vector<std::string>& lines) {
  size_t from = 0;
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].rfind(kStepMarker, 0) == 0) from = i + 1;
  static const Regex node_failure(R"(^srun: error: Node failure on (\S+))");
  static const Regex task_error(R"(^srun: error: (\S+): tasks? (\d{1,9})(?:-\d+)?: (.+)$)");
  static const Regex exited(R"(Exited with exit code (\d{1,9})\b)");
  std::vector<StepFailure> out;
  for (size_t i = from; i < lines.size(); ++i) {
    RegexMatch m;
    if (node_failure.search(lines[i], &m)) {
      StepFailure f;
      f.kind = StepFailureKind::NodeLost;
      f.node = m.str(1);
      out.push_back(f);
      continue;
    }
    if (!task_error.full_match(lines[i], &m)) continue;
    std::string how = m.str(3);
    StepFailure f;
    f.node = m.str(1);
    f.task = std::stoi(m.str(2));
    RegexMatch e;
    if (exited.search(how, &e)) {
      f.kind = StepFailureKind::TaskExited;
      f.code = std::stoi(e.str(1));
    } else if (auto sig = signal_named(trim(how))) {
      f.kind = StepFailureKind::TaskKilled;
      f.signal = *sig;
    } else {
      continue;  // "Unable to create step", "not responding": about srun, not a task's end
    }
    out.push_back(f);
  }
  return out;
}

std::map<std::string, std::string> parse_node_states(const std::string& show) {
  std::map<std::string, std::string> out;
  static const Regex name(R"((?:^|\s)NodeName=(\S+))"), state(R"((?:^|\s)State=(\S+))");
  for (const auto& line : split(show, '\n')) {
    RegexMatch n, s;
    if (name.search(line, &n) && state.search(line, &s)) out[n.str(1)] = s.str(1);
  }
  return out;
}

bool node_state_unhealthy(const std::string& state) {
  std::string s = state;
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (s.find('*') != std::string::npos) return true;  // not responding
  for (const char* bad : {"DOWN", "DRAIN", "FAIL", "NOT_RESPONDING", "POWER_DOWN", "POWERED_DOWN", "REBOOT"})
    if (s.find(bad) != std::string::npos) return true;
  return false;
}

}  // namespace ddpctl
