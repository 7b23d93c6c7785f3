#pragma once
// What each rank used (docs/report.md "Per rank"): a rank's share of an
// ended run's account (usage_account.hpp) — its GPU, or its share of its
// node's CPUs, for the time the step held them, split as the run's is
// (DDP's ranks train in lockstep) — and what its own samples show: how busy
// its device was, the CPU it waited for, its memory. A rank far less busy
// than the others waits on its own inputs; one far busier is the one the
// others wait for.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "explain/usage_account.hpp"
#include "runs/usage.hpp"

namespace ddpctl {

struct RankFacts {
  int world = 1, ranks_per_node = 1, gpus_per_node = 0;
  std::vector<double> peak_mem_mib;  // by rank, the metrics' last epoch (empty: not written)
};

// Fills a.ranks (and per-rank notes into a.notes) from the job agent's
// samples of every node; nothing where no sample names a rank.
void account_ranks(UsageAccount& a, const std::map<std::string, std::vector<UsageSample>>& samples,
                   const RankFacts& facts);

}  // namespace ddpctl
