#pragma once
// What the agent does to its own job through Slurm, from inside it: end the
// training step (watchdog.action restart), race its group again and
// requeue the job, excluding nodes where it is asked to (the watchdog's requeue).
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

// A raced run's winner requeued by its watchdog races its group again first,
// as its script does for its other requeues (requeue.sh, docs/race.md):
// `<program> race-again <run_dir> --requeuing <job_id> --because <why>
// [--leave-out <nodes>]`, within a minute (the requeue must follow before
// the time limit). Its output goes to stderr (the batch log); nullopt on
// success, else what failed (the requeue happens all the same).
std::optional<std::string> race_again_before_requeue(CommandRunner& runner, const std::string& program,
                                                     const std::string& run_dir, const std::string& job_id,
                                                     const std::string& why, const std::vector<std::string>& leave_out);

}  // namespace ddpctl
