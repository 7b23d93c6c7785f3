#pragma once
// Ranking a race's shapes (docs/race.md, --rank-by-estimate and --plan):
// each shape's preflight and `sbatch --test-only` estimate of its start, by
// finish also its run time predicted from earlier runs; shapes that cannot
// run are dropped with the reason.
#include <string>
#include <vector>

#include "base/diagnostics.hpp"
#include "explain/race.hpp"
#include "slurm/slurm.hpp"
#include "race/race_group.hpp"

namespace ddpctl {

// The ranking as printed: a heading (what it is ranked by, and `note`), then one line per shape.
std::vector<std::string> ranking_lines(const std::vector<RankedShape>& ranking, long long now, bool by_finish,
                                       const std::string& note = "");
// The labels of the shapes a ranking keeps, in its order.
std::vector<std::string> kept_labels(const std::vector<RankedShape>& ranking);

// `race --plan`: the ranking from scripts rendered into a scratch folder;
// nothing is submitted and no run is recorded.
// Ranked by `request.rank_by` ("finish" when empty); `note` says when a
// ranking by finish fell back to start, and why.
std::vector<RankedShape> plan_race(const RaceGroup& group, const RaceRequest& request, SlurmClient& slurm,
                                   std::string& note);
// A UserError naming each shape's reason when a ranking keeps no shape.
void throw_if_none_runs(const std::vector<RankedShape>& ranking);

// Preflight (unless skipped) and `sbatch --test-only` of each shape's script
// in `script_dir`; shapes that cannot run are dropped with the reason. By
// finish, each shape's run time is predicted too, and `note` says when that
// could not be done.
std::vector<RankedShape> rank_group(const RaceGroup& g, const RaceRequest& req, const std::string& script_dir,
                                    SlurmClient& slurm, std::string& note);

// A shape's own problems as one line (each "file:line: field: message").
std::string diagnostics_line(const Diagnostics& d);

}  // namespace ddpctl
