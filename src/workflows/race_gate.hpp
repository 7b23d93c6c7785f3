#pragma once
// `ddpctl race-gate COORDINATOR` (docs/race.md "Across sites"): one site's
// side of a race across sites, what the coordinator asks each site in its one
// ssh call per poll. It finds the site's run of that race (its race/gate/
// names the coordinator's run), does what the coordinator says:
//   --grant JOB       JOB trains: the gate's grant (only one, ever) names it,
//                     and a JOB that stood down held for want of a grant in
//                     time is released;
//   --stand-down WHO  another site won: every job of the run here stands down
//                     (a job not yet started is cancelled, each noted in
//                     race/cancelled.<id>);
// and answers, as JSON, what the coordinator decides from: the run, its jobs
// and their states (one squeue), and the gate's files (explain/race_gate.hpp).
#include <nlohmann/json.hpp>
#include <string>

#include "slurm/context.hpp"

namespace ddpctl {

struct RaceGateRequest {
  std::string runs_root;
  std::string coordinator;  // the race's run on the machine that submitted
  std::string grant;        // --grant JOB
  std::string stand_down;   // --stand-down "SITE JOB TIME" of the winner
};

nlohmann::json race_gate(const RaceGateRequest& req, Context& ctx);

}  // namespace ddpctl
