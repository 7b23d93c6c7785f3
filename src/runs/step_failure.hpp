#pragma once
// What failed when the training step ended, as srun's lines in the batch log
// and Slurm's node states say it: the input of the in-job restart's decision
// (in_job_restart.hpp) and the kinds its record keeps (in_job_record.hpp).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runs/job_contract.hpp"

namespace ddpctl {

// kStepMarker and kRequeueExit, which the script shares: job_contract.hpp.

// What srun said about one task or node of the step.
enum class StepFailureKind { TaskExited, TaskKilled, NodeLost, NodeCheck, Stalled, Unknown };
std::string step_failure_kind_name(StepFailureKind k);  // "task-exited", ... (the record's)
StepFailureKind parse_step_failure_kind(const std::string& s);

struct StepFailure {
  StepFailureKind kind = StepFailureKind::Unknown;
  std::string node;
  std::optional<int> task;
  std::optional<int> code, signal;
};
// The batch log's lines after the latest step marker, srun's failures in the
// order it said them ("srun: error: g2: task 1: Killed", "srun: error: Node
// failure on g3").
std::vector<StepFailure> parse_step_end(const std::vector<std::string>& batch_err_lines);

// `scontrol show node -o NAMES`: node -> its State ("IDLE", "DOWN*+NOT_RESPONDING").
std::map<std::string, std::string> parse_node_states(const std::string& show);
// A node Slurm says cannot run a step: down, drained or draining, failing, not responding.
bool node_state_unhealthy(const std::string& state);

}  // namespace ddpctl
