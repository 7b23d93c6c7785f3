#pragma once
// The records of a race across sites on the machine that submitted it
// (runs/RUN/, docs/race.md "Across sites"), each written once before what it
// allows is done, and read back by the coordinator, `status`, `cancel`,
// `logs`, `report` and `fetch`:
//   grant, grant.N   the race's one grant (round N's): JSON {site, job, at}
//                    (a grant recorded before as "SITE JOB TIME" still reads)
//   round.N          why round N was opened: JSON {why, from_site, from_job, opened_at}
//   relay.N          round N's checkpoint reached the grantee's site
//   relay.N.error    why it did not yet (the coordinator tries again)
//   site.NAME.run    the run at site NAME that is this race's, as the site
//                    first said it: a later answer naming another run is
//                    refused, and fetch takes only that run
#include <optional>
#include <string>
#include <vector>


namespace ddpctl {

// A site of the race: its login host as `on:` names it, the folder there
// (remote_dir), and its shapes.
struct SiteOfRace {
  std::string name, host, remote_dir;
  std::vector<std::string> labels;
};

// The race's one grant, recorded on this machine before it is sent.
struct SiteGrant {
  std::string site, job;
  double at = 0;
};

// The race's rounds as recorded on this machine (runs/RUN/): round 1 is the
// submission; round N (2, 3, ...) a re-race after the winner was requeued,
// round.N its record ({why, from_site, from_job}), grant.N its grant and
// relay.N that the checkpoint went to the grantee's site.
struct RaceRounds {
  int rounds = 1;  // the most the race may have (1 + requeue.max_restarts; a grid: 1)
  int round = 1;   // the newest opened
  std::string why, from_site, from_job;  // the newest's (round 2 and on)
  std::optional<SiteGrant> grant;        // the newest's
  std::string checkpoint_site;           // where the run trained last: the round before's grantee's site
  bool relayed = false;                  // the checkpoint is at the grantee's site (or needs no copy)
};

// The sites of the race as sites.json records them; a UserError naming the
// file when it is not the record ddpctl writes.
std::vector<SiteOfRace> read_race_sites(const std::string& dir);

// The race's grant as recorded here, the newest round's that has one;
// `record_site_grant` writes round `round`'s unless one is there, and
// returns the one that is.
std::optional<SiteGrant> read_site_grant(const std::string& dir);
SiteGrant record_site_grant(const std::string& dir, const SiteGrant& grant, int round = 1);
// The race's newest round recorded here (1: no re-race), round `n`'s grant
// and why it was opened (round.N's "why").
int site_race_round(const std::string& dir);
std::optional<SiteGrant> site_round_grant(const std::string& dir, int n);
std::string site_round_why(const std::string& dir, int n);
// The rounds as the coordinator decides from them (site_race.hpp).
RaceRounds read_rounds(const std::string& dir, int most);

// The run at site `name` this race recorded ("" : none yet).
std::string recorded_site_run(const std::string& dir, const std::string& name);
// Records `run` as site `name`'s unless one is recorded; "" when `run` is
// (now) the recorded one, else why it is refused.
std::string check_site_run(const std::string& dir, const std::string& name, const std::string& run);

// Why round `n`'s checkpoint has not reached the grantee's site yet, as the
// coordinator last tried it ("" : not tried, or it went).
std::string relay_error(const std::string& dir, int n);

}  // namespace ddpctl
