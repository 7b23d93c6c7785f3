#pragma once
// What a status row needs from Slurm beyond the job itself: the failure's
// extras (who cancelled it, the nodes a NODE_FAIL lost) and the earlier
// attempts of a requeued job. A job whose end is recorded has them in its
// ledger (JobEnd), a job sacct answered for in this refresh came with them;
// only a job squeue still shows asks, when its row needs it (the nodes once
// per refresh).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "explain/failure.hpp"
#include "runs/job_states.hpp"
#include "slurm/slurm.hpp"

namespace ddpctl {

// sacct --duplicates' records of arrays (tasks and collapsed pending
// records, every task in the order its attempts were submitted): each
// task's latest record (its current attempt, its requeue count that of its
// earlier ones) and its earlier attempts by its own job id. An earlier
// record under another job name is another job's that once had the same
// ids (a cluster whose ids started again): left out.
struct TaskAttempts {
  std::vector<Job> latest;
  std::map<std::string, std::vector<Job>> earlier;
};
TaskAttempts task_attempts(std::vector<Job> records);

class StatusExtras {
 public:
  StatusExtras(SlurmClient& slurm, const JobStates& states) : slurm_(slurm), states_(states) {}

  std::optional<Failure> failure(const RunShape& shape, const Job& job);
  // The earlier attempts of `job`, oldest first.
  std::vector<Job> earlier(const Job& job);
  // Who took a preempted `attempt`'s nodes (requeue.hpp's PreemptorOf): the
  // job of another partition that started on them first, from its end on
  // (one sacct); "" when accounting does not say.
  std::string preemptor(const Job& attempt);
  // Status of runs named (`status RUN`): what each ended job used (its
  // account reads the job's files; never for the whole list).
  bool named = false;

 private:
  SlurmClient& slurm_;
  const JobStates& states_;
  std::optional<std::vector<NodeInfo>> nodes_;
};

}  // namespace ddpctl
