#include "agent/rank_work.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace ddpctl {

std::optional<std::vector<double>> progress_rank_work(const std::string& progress_json) {
  nlohmann::json j = nlohmann::json::parse(progress_json, nullptr, false);
  if (!j.is_object() || !j.contains("rank_work_s") || !j["rank_work_s"].is_array()) return std::nullopt;
  std::vector<double> out;
  for (const auto& v : j["rank_work_s"]) {
    if (!v.is_number()) return std::nullopt;
    out.push_back(v.get<double>());
  }
  if (out.empty()) return std::nullopt;
  return out;
}

std::vector<RankCounter> SampleWork::add(const std::map<std::string, std::vector<UsageSample>>& samples) {
  for (const auto& [node, list] : samples) {
    double& last = last_t_[node];
    for (const auto& s : list) {
      if (s.t <= last) continue;
      last = s.t;
      if (s.interval_s <= 0) continue;
      for (const auto& r : s.ranks) {
        if (!r.cpu_pct || (!r.rank && !r.task)) continue;
        RankCounter& c = counters_[{node, r.rank ? *r.rank : -1 - *r.task}];
        c.id = {r.task.value_or(r.rank.value_or(0)), r.rank, node};
        c.work_s += (*r.cpu_pct + r.wait_pct.value_or(0)) / 100 * s.interval_s;
        c.wall_s += s.interval_s;
      }
    }
  }
  bool ranked = std::any_of(counters_.begin(), counters_.end(), [](const auto& c) { return c.second.id.rank.has_value(); });
  std::vector<RankCounter> out;
  for (const auto& [key, c] : counters_)
    if (c.id.rank.has_value() == ranked) out.push_back(c);
  return out;
}

}  // namespace ddpctl
