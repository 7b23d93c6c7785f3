#pragma once
// What the agent does to its own job through Slurm, from inside it: end the
// training step (watchdog.action restart), requeue the job, excluding nodes
// where it is asked to (the watchdog's requeue).
#include <optional>
#include <string>
#include <vector>

#include "base/process.hpp"

namespace ddpctl {

// The newest step of job `job_id` that `squeue -s` lists (the training
// step: the batch shell runs one at a time), from "812.3" or "812_4.3"
// lines; "" for none. `job_id` is an array task's <array>_<index>.
std::string newest_step(const std::string& squeue_steps);
// Ends the job's training step with SIGKILL (`scancel --signal=KILL
// JOB.STEP`) for watchdog.action restart; `step` gets its id. nullopt on success.
std::optional<std::string> end_training_step(CommandRunner& runner, const std::string& job_id, std::string* step);

// Requeues the job from inside it; with `exclude`, the job leaves its queue
// excluding those nodes (requeuehold, update ExcNodeList, release: Slurm
// takes ExcNodeList only from a pending job). nullopt on success.
std::optional<std::string> requeue_job(CommandRunner& runner, const std::string& job_id,
                                       const std::vector<std::string>& exclude);

}  // namespace ddpctl
