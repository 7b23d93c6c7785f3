#pragma once
// `ddpctl logs RUN`: the job's logs, found from the run record (Slurm's %x_%j
// names and the per-attempt, per-task step logs of the template), followed
// across requeues until the job ends. `logs SWEEP --cell NAME`: a grid
// cell's, its array task's own job id naming them.
#include <string>

#include "slurm/context.hpp"
#include "runs/output.hpp"
#include "runs/run_store.hpp"
#include "explain/status_grid.hpp"

namespace ddpctl {

struct LogsRequest {
  std::string run;  // name, id or path
  std::string runs_root;
  std::string shape;  // the job of this shape; empty: the latest job (a race's winner)
  int rank = -1;      // whose training output; -1: a failed job's first failing rank, else 0
  bool follow = false;
  // A grid's sweep: the cell (by name) whose array task's logs to show;
  // empty: the sweep's one cell, an error naming them when it has several.
  std::string cell;
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
// The highest attempt (the N of .restart<N>.) with a step log for the task, or -1.
int latest_logged_attempt(const JobLogs& logs);

// The cell of a grid's sweep `request` names (--cell, did-you-mean for a
// name it does not have), or its only cell; a UserError naming the cells
// when it has several and none is named.
const RunCell& pick_cell(const LogsRequest& request, const Run& run);
// Where a cell's logs are: its array task's own job id names them (as
// status --json's task_job_id), `request.rank`'s task among them. A
// UserError for a cell never submitted, or whose task has not started.
JobLogs locate_cell_logs(const LogsRequest& request, const Run& run, const CellState& cell);

// Prints the logs through `out` (the file headings as lines, their bytes as
// they are); with `follow`, waits for a race's winner first and keeps
// printing what is appended, across requeues, until the job ends.
void show_logs(const LogsRequest& request, Context& ctx, Output& out);

}  // namespace ddpctl
