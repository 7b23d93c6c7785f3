#pragma once
// Why a job is on its second attempt (or later): its script requeued itself
// (the time limit's signal, its node check, its watchdog) or Slurm did (a
// lost node, preemption, scontrol requeue), read from the batch log and
// from sacct's earlier attempts. Shown by status.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runs/run_record.hpp"
#include "slurm/job.hpp"

namespace ddpctl {

// "attempt 2 of 3 (requeued at the time limit)": why the job runs again.
struct Requeue {
  int attempt = 1;                 // 1-based
  std::optional<int> of;           // the attempts allowed (requeue.max_restarts + 1)
  std::string why;                 // "at the time limit", "by scontrol requeue", "after NODE_FAIL of g2", ...
  std::string describe() const;
};
// `earlier_attempts` says how the earlier attempts ended (sacct
// --duplicates); it is asked only when the logs do not tell.
std::optional<Requeue> find_requeue(const RunShape& shape, const Job& job,
                                    const std::function<std::vector<Job>()>& earlier_attempts = {});

}  // namespace ddpctl
