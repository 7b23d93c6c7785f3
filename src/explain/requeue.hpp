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
#include "slurm/slurm_job.hpp"

namespace ddpctl {

// "attempt 2 of 3 (requeued at the time limit)": why the job runs again.
struct Requeue {
  int attempt = 1;                 // 1-based
  std::optional<int> of;           // the attempts allowed (requeue.max_restarts + 1)
  std::string why;                 // "at the time limit", "by scontrol requeue", "after NODE_FAIL of g2", ...
  // After a preemption: "preempted by job 1234 (partition urgent) after
  // 2h03m"; after any requeue of the bundled trainer: "resumed from global
  // step 8200 (1 step lost)".
  std::vector<std::string> details;
  std::string describe() const;
};
// Who took a preempted attempt's nodes: "job 1234 (partition urgent)", or
// "" when not known (status_extras.hpp asks sacct).
using PreemptorOf = std::function<std::string(const Job& attempt)>;
// `earlier_attempts` says how the earlier attempts ended (sacct
// --duplicates); it is asked only when the logs do not tell, or for a
// preemption (how long the attempt ran, and `preemptor`).
std::optional<Requeue> find_requeue(const RunShape& shape, const Job& job,
                                    const std::function<std::vector<Job>()>& earlier_attempts = {},
                                    const PreemptorOf& preemptor = {});
// Every requeue of a job, for report: each attempt's why, preemptions
// counted, and the time from each requeued attempt's end to the next one's
// start (the run trained nothing between its checkpoint and then).
struct RequeueHistory {
  std::vector<std::string> requeues;  // "attempt 2: after preemption; 3m10s to the next start; resumed ..."
  int preemptions = 0;
  double lost_s = 0;  // summed, where Slurm's times say it
  double ran_s = 0;   // the requeued attempts' run time, where Slurm's times say it
};
// `earlier` are the earlier attempts (oldest first, sacct --duplicates);
// `latest` the job as it is now.
RequeueHistory requeue_history(const RunShape& shape, const Job& latest, const std::vector<Job>& earlier);

// The bundled trainer's step counter across a requeue, from task 0's logs
// of attempt `attempt` and the one before: "resumed from global step 120
// (no step lost)"; "" when they do not say.
std::string resumed_steps(const std::string& log_base, int attempt);

}  // namespace ddpctl
