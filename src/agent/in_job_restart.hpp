#pragma once
// In-job restarts (restart: {in_job, spares}; docs/running.md "When a rank or
// node is lost"): when the training step fails, the batch shell asks the job
// agent (`ddpctl job step-ended`) what to do. Here: the decision (a pure
// function: start the step again on which nodes, or fall back to the
// requeue, or fail). What failed is step_failure.hpp's, the record of each
// restart (<log base>.restart<N>.in-job.json) that status reads is
// in_job_record.hpp's.
#include <map>
#include <string>
#include <vector>

#include "runs/in_job_record.hpp"
#include "runs/step_failure.hpp"
#include "runs/job_contract.hpp"

namespace ddpctl {

struct RestartInput {
  std::vector<std::string> nodes;   // the failed step's, in order (the first held rank 0)
  std::vector<std::string> spares;  // the allocation's other nodes, not yet used
  int restarts_done = 0;            // in-job restarts of this attempt so far
  int max_in_job = 0;               // restart.in_job
  // The shape's nodes (the step's size before any shrink; 0: nodes.size())
  // and restart.min_nodes (0: never shrink below it).
  int full_nodes = 0, min_nodes = 0;
  int attempt = 0, max_requeues = 0;  // SLURM_RESTART_COUNT, requeue.max_restarts (0: no requeue)
  bool tasks_are_ranks = false;     // one task per rank (a task's number is its rank)
  int step_rc = 1;                  // the step's exit status as the batch shell saw it
  std::vector<StepFailure> failures;      // parse_step_end
  std::vector<std::string> check_failed;  // nodes whose node check before the step failed
  std::map<std::string, std::string> node_states;  // parse_node_states, for nodes and spares
  // The watchdog's act on this attempt, when it cancelled or requeued the
  // job (Cancelling, Requeued, ...): the step ended because of it.
  WatchdogOutcome watchdog_taken = WatchdogOutcome::None;
  // watchdog.action restart ended this step: the stall in words ("stalled
  // 1m00s: rank 1 (g2) is not in a collective — ...") and the nodes of the
  // ranks it names, left out like a failed task's.
  std::string watchdog_stall;
  std::vector<std::string> watchdog_nodes;
  // watchdog.exclude_slow's slow nodes: left out like a failed task's.
  std::vector<std::string> slow_nodes;
};

// What the batch shell does: `job step-ended`'s exit status (job_contract.hpp;
// launch.sh), Go meaning start the step again on `nodes`.
struct RestartDecision {
  AgentVerdict verdict = AgentVerdict::Fail;
  StepFailureKind kind = StepFailureKind::Unknown;
  std::string cause;                   // "rank 5 on g3 was killed (signal 9)"
  std::vector<std::string> failed;     // the nodes the cause names
  std::vector<std::string> left_out;   // of the step's nodes, not in the next one
  std::vector<std::string> taken;      // spares taken
  std::vector<std::string> nodes, spares;  // the next step's (Restart)
  bool shrunk = false;                 // the next step runs on fewer nodes than the shape's (min_nodes)
  std::vector<std::string> exclude;    // nodes the requeued job leaves out (Requeue)
  std::string text;                    // the cause and what was done about it, for status and the log
  bool stopped_for_requeue = false;    // every task exited with the trainer's requeue exit (Requeue)
};
RestartDecision decide_restart(const RestartInput& in);

}  // namespace ddpctl
