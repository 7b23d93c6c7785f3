#pragma once
// `ddpctl coordinate RUN`: the coordinator of a race across sites (docs/race.md
// "Across sites"), on the machine that submitted it. `submit` starts it
// apart from the terminal (sites_submit.hpp); run by hand it goes on where
// the last one stopped (a machine that slept, a killed process): everything
// it knows is in runs/RUN/ and at the sites. One runs per race (a lock).
//
// Each poll asks every site once (`ddpctl race-gate RUN` over the user's ssh,
// one call per site, carrying what the last decision told that site) and
// decides (site_race.hpp): the first job waiting at a gate is granted (the
// grant recorded here first, exclusively), the other sites stand down. It
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
#include "workflows/site_race.hpp"

namespace ddpctl {

// The pid of the coordinator that holds RUN's lock (in the run folder `dir`).
std::optional<long> running_coordinator(const std::string& dir);

// How the coordinator reaches a site: `ddpctl WORDS` in the site's folder
// there, its stdout back; "" and `error` when it could not be asked.
class SiteCaller {
 public:
  virtual ~SiteCaller() = default;
  virtual std::string call(const SiteOfRace& site, const std::vector<std::string>& words, std::string& error) = 0;
  // The ssh calls made so far (connections opened included), for the log.
  virtual int calls() const { return 0; }
  // `ddpctl FROM_WORDS` at `from`, its stdout into `file` here, then
  // `ddpctl TO_WORDS` at `to` with `file` on its stdin: a checkpoint going
  // to the site that won a re-race. false with `error` when either failed;
  // `answer` is the second's stdout.
  virtual bool relay(const SiteOfRace& from, const std::vector<std::string>& from_words, const SiteOfRace& to,
                     const std::vector<std::string>& to_words, const std::string& file, std::string& answer,
                     std::string& error) {
    (void)from, (void)from_words, (void)to, (void)to_words, (void)file, (void)answer;
    error = "this caller cannot carry a checkpoint";
    return false;
  }
};

// `ddpctl cancel RUN` of a race across sites: runs/RUN/cancelled is written
// here first (the coordinator grants nothing after it, and stands every site
// down), then each site is told at once (race-gate --stand-down: its jobs
// cancelled, its gate closed). Says each site's answer on `out` lines;
// returns how many sites could not be told (the coordinator tells them when
// it reaches them).
int cancel_site_race(const std::string& dir, SiteCaller& sites, std::vector<std::string>& said);

// The race's grant as recorded here (runs/RUN/grant; a re-race's round N:
// grant.N), the newest round's that has one; `record_site_grant` writes
// round `round`'s unless one is there, and returns the one that is.
std::optional<SiteGrant> read_site_grant(const std::string& dir);
SiteGrant record_site_grant(const std::string& dir, const SiteGrant& grant, int round = 1);
// The race's newest round recorded here (1: no re-race), round `n`'s grant
// and why it was opened (round.N's "why").
int site_race_round(const std::string& dir);
std::optional<SiteGrant> site_round_grant(const std::string& dir, int n);
std::string site_round_why(const std::string& dir, int n);

struct CoordinateRequest {
  std::string runs_root, id;
  double poll_s = 5;
  double max_s = 0;  // stop after this long (0: until the race ends); tests and `--for`
};

// The loop; returns 0 when the race ended (or another coordinator runs), 1
// when it stopped at max_s.
int coordinate(const CoordinateRequest& req, SiteCaller& sites, Clock& clock, std::ostream& log);

}  // namespace ddpctl
