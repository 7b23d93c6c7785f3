#include "agent/usage_hints.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "base/text.hpp"

namespace ddpctl {

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
