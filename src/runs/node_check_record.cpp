#include "runs/node_check_record.hpp"

#include <cmath>

#include "runs/job_files.hpp"

namespace ddpctl {

namespace {

constexpr std::pair<NodeProblemKind, const char*> kProblemKinds[] = {
    {NodeProblemKind::CannotListen, "cannot-listen"}, {NodeProblemKind::CannotReach, "cannot-reach"},
    {NodeProblemKind::Gpus, "gpus"}, {NodeProblemKind::Memory, "memory"},
    {NodeProblemKind::Fabric, "fabric"}, {NodeProblemKind::Other, "other"}};

}  // namespace

std::string node_problem_kind_name(NodeProblemKind k) {
  for (const auto& [kind, name] : kProblemKinds)
    if (kind == k) return name;
  return "other";
}

NodeProblemKind parse_node_problem_kind(const std::string& s) {
  for (const auto& [kind, name] : kProblemKinds)
    if (s == name) return kind;
  return NodeProblemKind::Other;
}

nlohmann::json node_check_json(const NodeCheckResult& r) {
  nlohmann::json problems = nlohmann::json::array();
  for (const auto& p : r.problems) problems.push_back({{"kind", node_problem_kind_name(p.kind)}, {"text", p.text}});
  return {{"node", r.node}, {"ok", r.ok}, {"problems", problems}, {"notes", r.notes},
          {"seconds", std::round(r.seconds * 100) / 100}};
}

std::optional<NodeCheckResult> parse_node_check(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("node")) return std::nullopt;
  NodeCheckResult r;
  r.node = j.value("node", "");
  r.ok = j.value("ok", false);
  // {"kind", "text"}; a plain string (a record of an older ddpctl) has no kind.
  if (j.contains("problems") && j["problems"].is_array())
    for (const auto& p : j["problems"]) {
      if (p.is_string()) r.problems.push_back({NodeProblemKind::Other, p.get<std::string>()});
      if (p.is_object() && p.contains("text") && p["text"].is_string())
        r.problems.push_back({parse_node_problem_kind(p.value("kind", "")), p["text"].get<std::string>()});
    }
  if (j.contains("notes") && j["notes"].is_array())
    for (const auto& p : j["notes"])
      if (p.is_string()) r.notes.push_back(p.get<std::string>());
  r.seconds = j.value("seconds", 0.0);
  return r;
}

std::string node_check_path(const std::string& log_base, int attempt, const std::string& node) {
  return job_files::node_check(log_base, attempt, node);
}

}  // namespace ddpctl
