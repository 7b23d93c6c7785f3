#include "agent/straggler_watch.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <set>

namespace ddpctl {

std::optional<std::vector<RankWork>> WorkWindow::push(double now, const std::vector<RankCounter>& counters) {
  std::map<int, RankCounter> current;
  for (const auto& c : counters) current[c.id.key()] = c;
  if (!history_.empty()) {
    for (const auto& [key, before] : history_.back().second) {
      auto it = current.find(key);
      if (it != current.end() && (it->second.work_s < before.work_s - 1e-9 || it->second.wall_s < before.wall_s - 1e-9)) {
        history_.clear();
        break;
      }
    }
  }
  history_.emplace_back(now, std::move(current));
  // The newest counters at least a window old; older ones are needed no more.
  size_t base = history_.size();
  for (size_t i = history_.size() - 1; i-- > 0;)
    if (history_[i].first <= now - window_) {
      base = i;
      break;
    }
  if (base == history_.size()) return std::nullopt;
  history_.erase(history_.begin(), history_.begin() + static_cast<long>(base));
  std::vector<RankWork> out;
  const auto& then = history_.front().second;
  for (const auto& [key, c] : history_.back().second) {
    auto it = then.find(key);
    if (it == then.end()) continue;
    double span = c.wall_s - it->second.wall_s;
    if (span <= 0) continue;
    out.push_back({c.id, c.work_s - it->second.work_s, span});
  }
  return out;
}

std::vector<RankSpeed> relative_speeds(const std::vector<RankWork>& work) {
  std::vector<RankSpeed> out;
  for (const auto& w : work)
    if (w.span_s > 0 && w.work_s > 0) out.push_back({w.id, 1, w.work_s / w.span_s});
  if (out.size() < 2) return {};
  double least = std::min_element(out.begin(), out.end(), [](const RankSpeed& a, const RankSpeed& b) {
                   return a.busy < b.busy;
                 })->busy;
  for (auto& s : out) s.speed = least / s.busy;
  return out;
}

void StragglerWatch::reset() { runs_.clear(); }

StragglerVerdict StragglerWatch::observe(double now, SpeedBasis basis, const std::vector<RankWork>& work) {
  StragglerVerdict v;
  v.speeds = relative_speeds(work);
  if (v.speeds.empty()) return v;  // no reading: nothing changes
  std::vector<const RankSpeed*> below;
  for (const auto& s : v.speeds)
    // A rank mostly idle by its CPU keeps nobody waiting, however it compares.
    if (s.speed < kSlowBelow && (basis != SpeedBasis::CpuDemand || s.busy >= 0.5)) below.push_back(&s);
  if (!below.empty() && 2 * below.size() > v.speeds.size()) {
    v.none_because = fmt::format("{} of {} ranks are below {:.1f}× the fastest: the fastest are the odd ones out",
                                 below.size(), v.speeds.size(), kSlowBelow);
    below.clear();
  }
  std::set<int> keys;
  for (const auto* s : below) keys.insert(s->id.key());
  for (auto it = runs_.begin(); it != runs_.end();) {
    if (keys.count(it->first)) {
      ++it;
      continue;
    }
    if (it->second.named) {
      const Run& r = it->second;
      recovered_.push_back({r.id, r.speed_sum / r.readings, r.since, now});
      v.changed = true;
    }
    it = runs_.erase(it);
  }
  for (const auto* s : below) {
    auto [it, fresh] = runs_.try_emplace(s->id.key());
    Run& r = it->second;
    if (fresh) r.since = now;
    r.id = s->id;
    r.speed_sum += s->speed;
    r.readings++;
    if (!r.named && now - r.since >= slow_after_) r.named = v.changed = true;
  }
  for (const auto& [key, r] : runs_)
    if (r.named) v.named.push_back({r.id, r.speed_sum / r.readings, r.since, std::nullopt});
  return v;
}

}  // namespace ddpctl
