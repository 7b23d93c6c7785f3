#pragma once
// `ddpctl job step-ended` and `ddpctl job step-started` (restart:,
// launch.sh): what the batch shell asks between training steps. What failed
// is read from the batch log, Slurm's node states, the node checks' and the
// watchdog's records; in_job_restart.hpp decides; the decision is recorded
// before the batch shell acts on it.
#include <string>
#include <vector>

#include "agent/in_job_restart.hpp"
#include "slurm/context.hpp"

namespace ddpctl {

// `job step-ended` (restart:, launch.sh): the training step failed; what
// failed (srun's lines in the batch log since the step's marker, Slurm's
// node states, the node check's records), the decision (in_job_restart.hpp),
// recorded in <log base>.restart<N>.in-job.json before the batch shell acts
// on it. The node check records of the next step's nodes are removed, so
// that a node that cannot check again is not read as its old success.
struct StepEndedOptions {
  std::string log_base;
  std::vector<std::string> nodes, spares;
  int restarts_done = 0, max_in_job = 0, max_requeues = 0, step_rc = 1;
  int full_nodes = 0, min_nodes = 0;  // the shape's nodes, restart.min_nodes (0: no shrink)
  bool tasks_are_ranks = false;
  bool check_failed = false;  // the node check before the step failed: no step ran
};
RestartDecision on_step_ended(const StepEndedOptions& o, Context& ctx);
// `job step-started`: the restart `number` has started its step (the record after the act).
void on_step_started(const std::string& log_base, int number, Context& ctx);

}  // namespace ddpctl
