#pragma once
// `ddpctl cancel`: scancel the jobs of runs (or bare job ids), then confirm
// from Slurm that each one ended. The request is recorded in the ledger
// before scancel runs.
#include <string>
#include <vector>

#include "slurm/context.hpp"
#include "runs/job_states.hpp"
#include "runs/output.hpp"

namespace ddpctl {

struct CancelRequest {
  std::vector<std::string> targets;  // runs, experiments or job ids
  std::string runs_root;
  double confirm_s = 30;  // how long each job may take to end after scancel
  std::vector<std::string> cells;  // a grid's sweep: only these cells (names); empty: every cell
};

// Says each job's end through `out` ("job 12: CANCELLED", "job 9: already
// ended (COMPLETED)"); throws UserError listing every job it could not
// cancel or confirm.
void cancel_jobs(const CancelRequest& request, Context& ctx, Output& out);

// The jobs `ids` as Slurm's `states` (every id present) show them before
// scancel: `ended` ("job 9: already ended (COMPLETED)"), `unknown` (a
// failure each: what could not be read; nothing is cancelled for them) and
// `live`, the ids to cancel, in the order of `ids`.
struct CancelTargets {
  std::vector<std::string> ended, unknown, live;
};
CancelTargets sort_cancel_targets(const std::vector<std::string>& ids, const JobStates& states);

}  // namespace ddpctl
