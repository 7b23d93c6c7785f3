#pragma once
// `ddpctl logs RUN`: the job's logs, found from the run record (Slurm's %x_%j
// names and the per-attempt, per-task step logs of the template), followed
// across requeues until the job ends.
#include <string>

#include "context.hpp"
#include "output.hpp"
#include "runs.hpp"

namespace ddpctl {

struct LogsRequest {
  std::string run;  // name, id or path
  std::string runs_root;
  std::string shape;  // the job of this shape; empty: the latest job (a race's winner)
  int rank = -1;      // whose training output; -1: a failed job's first failing rank, else 0
  bool follow = false;
};

// Where one job's logs are.
struct JobLogs {
  std::string job_id;
  std::string base;  // <output_dir>/<job name>_<job id>
  int task = 0;      // the srun task that runs `rank`
};
// The logs of the attempt `request` names in `run`. Throws UserError for a
// run without a job (of that shape), or a rank outside the job.
JobLogs locate_logs(const LogsRequest& request, const Run& run, const std::string& race_winner);
// The highest restart number with a step log for the task, or -1.
int latest_restart(const JobLogs& logs);

// Prints the logs through `out` (the file headings as lines, their bytes as
// they are); with `follow`, waits for a race's winner first and keeps
// printing what is appended, across requeues, until the job ends.
void show_logs(const LogsRequest& request, Context& ctx, Output& out);

}  // namespace ddpctl
