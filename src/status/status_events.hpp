#pragma once
// The ends of a run's jobs as events (runs/events.hpp), with the reason
// status gives them: status, and `ddpctl events` while it follows a run,
// write each once, when they first see it (an end is Slurm's to say; no
// job can write its own after a cancel, a time limit or a lost node).
#include "runs/run_record.hpp"
#include "status/status_rows.hpp"

namespace ddpctl {

// `ended` of the job (or a grid cell's task) in `row`, once.
void say_job_ended(const Run& run, const Attempt& a, const StatusRow& row, const std::string& cell = "");
// `run_ended` once every job of `run` has ended, once.
void say_run_ended(const Run& run);

}  // namespace ddpctl
