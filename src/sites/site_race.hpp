#pragma once
// The coordinator's decisions in a race across sites (docs/race.md "Across
// sites"), from what each site's `ddpctl race-gate` answered in this poll
// (race_gate.hpp) and the grant recorded on this machine. Pure: the loop
// that asks the sites over ssh and keeps the records is coordinate.hpp.
//
// The guarantee: a job trains only when the gate of its site holds a grant
// naming it, a grant is sent only as the one recorded here, and the record
// is made (exclusively, before anything is sent) once per race. So no two
// sites ever train the run at once, whatever the coordinator's fate.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runs/race_files.hpp"
#include "runs/site_records.hpp"

namespace ddpctl {

struct SiteJob {
  std::string id, label, state, reason;
  bool ended = false;  // for good
};

// One site as its poll answered.
struct SitePoll {
  std::string name;       // site_name: the rows' and the records' word
  bool reached = false;   // the call answered with the gate's JSON
  std::string error;      // why not (ssh, the ddpctl there)
  bool submitted = false; // a run there is this race's site
  std::string run;        // that run
  std::string site;       // the host that run's gate says it is (race-gate's --site)
  std::vector<SiteJob> jobs;
  std::vector<RaceEvent> at_gate, passed, timeouts;
  std::optional<std::string> grant;  // the job the gate there grants
  bool stood_down = false;           // its stand-down is written
  // Its submission from the machine that submitted has ended (a site still
  // being submitted to may yet queue jobs: it is never taken as done).
  bool submission_ended = false;
  // It ended with an error (the site could not be reached, ddpctl there
  // refused): a site that also cannot be reached now is left out, not
  // waited for. A job that reached its queue anyway can only wait at its
  // gate and stand down held: no grant ever goes there.
  bool submission_failed = false;
  // The race's newest round there (what the events, grant and stand-down
  // are of) and who opened it: "coordinator", or "job" (the requeued
  // winner restarting, granting itself); "" for round 1.
  int round = 1;
  std::string round_opened;
  // Its run's events after the seq the call asked for (race-gate
  // --events-after), each checked as the event schema has it; more wait
  // when `events_more`.
  std::vector<nlohmann::json> events;
  bool events_more = false;
};

// What the next call to each site carries.
struct SiteAction {
  std::string grant;       // --grant JOB
  std::string stand_down;  // --stand-down "SITE JOB TIME"
  int round = 0;           // --round N with them (0: round 1, said without it)
  int open_round = 0;      // --open-round N --because WHY (re-race), with --resubmit
  std::string because;
  bool resubmit = false;
};

struct SiteDecision {
  std::optional<SiteGrant> new_grant;        // to record (exclusively) before acting on it
  std::map<std::string, SiteAction> actions;  // by site name; none: a plain poll
  // The grantee went through and every other site stood down with no job
  // left; or, with no grant, every site's submission ended and no job is left.
  bool done = false;
  std::vector<std::string> said;  // what the coordinator's log says of this poll
};

// The job has ended, by its site's word or its state (an ended state, not
// COMPLETING).
bool site_job_ended(const SiteJob& j);

// From this poll and the recorded grant (none yet: the first job waiting at
// a gate, one still running before one that stood down held, earliest by
// its site's clock, gets it).
SiteDecision decide_sites(const std::vector<SitePoll>& sites, const std::optional<SiteGrant>& granted, double now);

// What opens the next round: the winner's job at `from_site` went through
// and was requeued (Slurm shows it PENDING again).
struct RoundOpening {
  int round = 0;
  std::string why, from_site, from_job;
};

struct RoundDecision {
  SiteDecision sites;
  std::optional<RoundOpening> open;  // to record here, then ask from_site to open
  bool relay = false;                // copy the checkpoint from checkpoint_site to the grantee's first
};

// The coordinator's decision with rounds: decide_sites for the newest
// round, and around it: a round opened here is opened first at the site
// whose winner was requeued, then (only if the coordinator opened it there)
// at every other site, which submits its shapes again; a grant at another
// site than the checkpoint's is sent only once the checkpoint was relayed,
// after that site's jobs ended; and a winner that went through while the
// race may have more rounds is watched until its job ends (done) or is
// requeued (the next round).
RoundDecision decide_rounds(const std::vector<SitePoll>& sites, const RaceRounds& rounds, double now);

// The race was cancelled (`ddpctl cancel RUN`): no grant any more, every
// site stands down (`line` says why), the grantee's too; done once no site
// has a job left.
SiteDecision cancel_sites(const std::vector<SitePoll>& sites, const std::string& line);

}  // namespace ddpctl
