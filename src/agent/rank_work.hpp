#pragma once
// The work of each rank that the straggler watch (straggler_watch.hpp)
// compares: the bundled trainer's own count in its progress file, or the
// usage samples' CPU time used or waited for (a rank starved of CPU by a
// quota or a neighbour waits for it; a rank waiting for its peers sleeps).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/straggler_watch.hpp"
#include "runs/usage.hpp"

namespace ddpctl {

// The bundled trainer's per-rank work in its progress file
// ("rank_work_s": [seconds of rank 0, 1, ...]); nullopt without it.
std::optional<std::vector<double>> progress_rank_work(const std::string& progress_json);

// Each rank's CPU time used or waited for (cpu_pct + wait_pct of the samples),
// summed sample after sample, per node. Only ranks with a RANK when any
// sample has one (a launcher's own process is no rank).
class SampleWork {
 public:
  // The new samples of each node (those after the last seen); the counters.
  std::vector<RankCounter> add(const std::map<std::string, std::vector<UsageSample>>& samples);

 private:
  std::map<std::string, double> last_t_;
  std::map<std::pair<std::string, int>, RankCounter> counters_;  // (node, rank or -1 - task)
};

}  // namespace ddpctl
