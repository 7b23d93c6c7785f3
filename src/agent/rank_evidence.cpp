#include "agent/rank_evidence.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "base/text.hpp"

namespace ddpctl {

std::string rank_name(const RankEvidence& r) {
  return r.rank ? fmt::format("rank {}", *r.rank) : fmt::format("task {}", r.task);
}

// "rank 1 (g1)", "ranks 0, 2, 3 (g1, g2)"
std::string describe_ranks(const std::vector<const RankEvidence*>& rs) {
  if (rs.empty()) return "";
  if (rs.size() == 1) return rank_name(*rs[0]) + (rs[0]->node.empty() ? "" : " (" + rs[0]->node + ")");
  // Ranks, then processes known by their task only (a launcher beside its
  // workers): "ranks 0, 1, 2, 3 and tasks 0, 1 (g1, g2)".
  std::vector<std::string> ranks, tasks, nodes;
  for (const auto* r : rs) {
    (r->rank ? ranks : tasks).push_back(std::to_string(r->rank ? *r->rank : r->task));
    if (!r->node.empty() && std::find(nodes.begin(), nodes.end(), r->node) == nodes.end()) nodes.push_back(r->node);
  }
  auto some = [](const char* one, const char* many, const std::vector<std::string>& ids) {
    return ids.empty() ? std::string() : fmt::format("{} {}", ids.size() == 1 ? one : many, join(ids, ", "));
  };
  std::string who = some("rank", "ranks", ranks);
  if (!tasks.empty()) who += (who.empty() ? "" : " and ") + some("task", "tasks", tasks);
  return who + (nodes.empty() ? "" : " (" + join(nodes, ", ") + ")");
}

std::string describe_stack_sources(const std::vector<RankEvidence>& ranks) {
  std::vector<std::pair<std::string, std::vector<const RankEvidence*>>> ways;
  for (const auto& r : ranks) {
    std::vector<std::string> names;
    for (StackFormat f : r.taken_by) names.push_back(stack_format_name(f));
    std::string how = names.empty() ? "none" : join(names, " and ");
    auto w = std::find_if(ways.begin(), ways.end(), [&](const auto& x) { return x.first == how; });
    if (w == ways.end()) w = ways.insert(ways.end(), {how, {}});
    w->second.push_back(&r);
  }
  std::vector<std::string> parts;
  for (const auto& [how, rs] : ways) parts.push_back(how + ": " + describe_ranks(rs));
  return join(parts, "; ");
}

}  // namespace ddpctl
