#pragma once
// The ends of a run's jobs as events (runs/events.hpp), with the reason
// status gives them: status, and `ddpctl events` while it follows a run,
// write each once, when they first see it (an end is Slurm's to say; no
// job can write its own after a cancel, a time limit or a lost node).
// An end squeue still shows is said at once, not after Slurm forgets the
// job (MinJobAge, 5 minutes by default); a job requeued after it ends
// again under its next requeue count.
#include "runs/job_states.hpp"
#include "runs/run_record.hpp"
#include "status/status_rows.hpp"

namespace ddpctl {

// `ended` of the job (or a grid cell's task) in `row`, once per requeue
// count (`job`: as Slurm answered for it).
void say_job_ended(const Run& run, const Attempt& a, const Job& job, const StatusRow& row,
                   const std::string& cell = "");
// `run_ended` once every job of `run` has ended: its end recorded in the
// ledger, or ended in what Slurm answered (`states`; a grid's arrays:
// `cells_over`, every cell submitted and its task ended).
void say_run_ended(const Run& run, const JobStates& states, bool cells_over = false);

}  // namespace ddpctl
