#pragma once
// `ddpctl coordinate RUN`: the coordinator of a race across sites (docs/race.md
// "Across sites"), on the machine that submitted it. `submit` starts it
// apart from the terminal (sites_submit.hpp); run by hand it goes on where
// the last one stopped (a machine that slept, a killed process): everything
// it knows is in runs/RUN/ and at the sites. One runs per race (a lock).
//
// Each poll asks every site at once (`ddpctl race-gate RUN --site HOST` over
// the user's ssh, one call per site on a thread of its own, carrying what
// the last decision told that site; site_polls.hpp), waits at most a poll's
// time for them, and decides from the answers that came (site_race.hpp): a
// site still answering is asked again once it answered. So a slow or hung
// site holds no other's grant back. The first job waiting at a gate is
// granted (the grant recorded here first, exclusively), the other sites
// stand down; a re-race's checkpoint is carried beside the polls. It
// ends once the grantee went through and no other site has a job left, or
// nobody can train any more; runs/RUN/coordinator.done says how. A race
// that may race again (sites.json's "rounds": the spec's requeue:) is
// watched while its winner trains, one call every 6 polls: a winner
// requeued opens the next round (decide_rounds), and it ends once the
// winner's run ended.
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "base/clock.hpp"
#include "sites/site_call.hpp"

namespace ddpctl {

// The pid of the coordinator that holds RUN's lock (in the run folder `dir`).
std::optional<long> running_coordinator(const std::string& dir);

// `ddpctl cancel RUN` of a race across sites: runs/RUN/cancelled is written
// here first (the coordinator grants nothing after it, and stands every site
// down), then every site is told at once (race-gate --stand-down: its jobs
// cancelled, its gate closed), a site that does not answer holding no other
// back. Says each site's answer in `said`; returns how many sites could not
// be told (the coordinator tells them when it reaches them).
int cancel_site_race(const std::string& dir, SiteCaller& sites, std::vector<std::string>& said);

struct CoordinateRequest {
  std::string runs_root, id;
  double poll_s = 5;
  double max_s = 0;  // stop after this long (0: until the race ends); tests and `--for`
};

// The loop; returns 0 when the race ended (or another coordinator runs), 1
// when it stopped at max_s.
int coordinate(const CoordinateRequest& req, SiteCaller& sites, Clock& clock, std::ostream& log);

}  // namespace ddpctl
