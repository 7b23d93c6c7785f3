#include "explain/rank_account.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace ddpctl {

namespace {

struct Seen {
  std::string node;
  double latest = 0;
  double busy_sum = 0, wait_sum = 0;
  int busy_n = 0, wait_n = 0;
  long long rss_peak = 0;
};

// Each rank's samples: its processes' CPU (RankUsage), and on GPU nodes the
// utilisation of its node's GPU of its local rank's index.
std::map<int, Seen> seen_by_rank(const std::map<std::string, std::vector<UsageSample>>& samples,
                                 const RankFacts& f) {
  std::map<int, Seen> by;
  for (const auto& [node, list] : samples) {
    for (const auto& s : list) {
      for (const auto& r : s.ranks) {
        if (!r.rank || *r.rank < 0 || *r.rank >= f.world) continue;
        Seen& x = by[*r.rank];
        if (s.t >= x.latest) x.latest = s.t, x.node = node;
        x.rss_peak = std::max(x.rss_peak, r.rss_bytes);
        if (r.wait_pct) x.wait_sum += *r.wait_pct, x.wait_n++;
        if (f.gpus_per_node > 0) {
          // The sampler lists the job's GPUs in index order, which is the
          // order of CUDA_VISIBLE_DEVICES: local rank k has the k-th. Where
          // it lists another count (Slurm did not say which were the job's),
          // which GPU is whose is not known.
          int local = *r.rank % std::max(1, f.ranks_per_node);
          if (static_cast<int>(s.gpus.size()) == f.gpus_per_node && local < f.gpus_per_node)
            x.busy_sum += s.gpus[static_cast<size_t>(local)].util_pct, x.busy_n++;
        } else if (r.cpu_pct && s.cpus > 0) {
          // Its share of the node's CPUs: 100% is all of them busy.
          double cpus = static_cast<double>(s.cpus) / std::max(1, f.ranks_per_node);
          x.busy_sum += std::min(100.0, *r.cpu_pct / cpus), x.busy_n++;
        }
      }
    }
  }
  return by;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// A rank far from the others' median, in words (jobstats-like).
void add_rank_notes(UsageAccount& a, bool gpu) {
  std::vector<double> busy;
  for (const auto& r : a.ranks)
    if (r.busy_pct) busy.push_back(*r.busy_pct);
  if (busy.size() < 2) return;
  double mid = median(busy);
  const char* what = gpu ? "its GPU" : "its CPUs";
  for (const auto& r : a.ranks) {
    if (!r.busy_pct) continue;
    if (*r.busy_pct < 0.7 * mid)
      a.notes.push_back(fmt::format("rank {} on {}: {} busy {:.0f}% against the ranks' median {:.0f}%: it waits on "
                                    "something of its own (its loader, its node)",
                                    r.rank, r.node, what, *r.busy_pct, mid));
    else if (mid < 80 && *r.busy_pct > 1.3 * mid)
      a.notes.push_back(fmt::format("rank {} on {}: {} busy {:.0f}% against the ranks' median {:.0f}%: the others "
                                    "wait for it",
                                    r.rank, r.node, what, *r.busy_pct, mid));
  }
}

}  // namespace

void account_ranks(UsageAccount& a, const std::map<std::string, std::vector<UsageSample>>& samples,
                   const RankFacts& f) {
  std::map<int, Seen> by = seen_by_rank(samples, f);
  if (by.empty() || f.world < 1) return;
  double held = 0, node_s = 0, cpu_s = 0, gpu_s = 0, training = 0;
  for (const auto& p : a.parts) {
    if (p.key == "idle") continue;
    held += p.seconds, node_s += p.node_s, cpu_s += p.cpu_s, gpu_s += p.gpu_s;
    if (p.key == "training") training = p.seconds;
  }
  for (int rank = 0; rank < f.world; ++rank) {
    RankAccount r;
    r.rank = rank;
    r.held_s = held;
    r.training_s = training;
    r.node_s = node_s / f.world, r.cpu_s = cpu_s / f.world, r.gpu_s = gpu_s / f.world;
    if (auto it = by.find(rank); it != by.end()) {
      const Seen& x = it->second;
      r.node = x.node;
      r.rss_peak_bytes = x.rss_peak;
      if (x.busy_n) r.busy_pct = x.busy_sum / x.busy_n;
      if (x.wait_n) r.cpu_wait_pct = x.wait_sum / x.wait_n;
    }
    if (static_cast<size_t>(rank) < f.peak_mem_mib.size()) r.mem_peak_mib = f.peak_mem_mib[static_cast<size_t>(rank)];
    a.ranks.push_back(r);
  }
  add_rank_notes(a, f.gpus_per_node > 0);
}

}  // namespace ddpctl
