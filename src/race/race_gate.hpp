#pragma once
// `ddpctl race-gate COORDINATOR --site HOST` (docs/race.md "Across sites"):
// one site's side of a race across sites, what the coordinator asks each
// site in its one ssh call per poll. It finds the site's run of that race
// (its race/gate/ names the coordinator's run and the site HOST: one login
// host named twice in a spec, as an alias and as user@host, is two sites
// whose runs share a folder), does what the coordinator says:
//   --grant JOB       JOB trains: the gate's grant (only one, ever) names it,
//                     and a JOB that stood down held for want of a grant in
//                     time is released;
//   --stand-down WHO  another site won: every job of the run here stands down
//                     (a job not yet started is cancelled, each noted in
//                     race/cancelled.<id>);
//   --round N         both for the race's round N (default: the newest here;
//                     a grant for a round that is not the newest here is
//                     refused, a stand-down for an older one does nothing);
//   --open-round N --because WHY
//                     the race runs again: round N opens here (once; not
//                     when the requeued winner's job opened it itself),
//                     where the winner was requeued only once a job went
//                     through this site's newest round; with --resubmit (a
//                     site that stood down) every shape is submitted again,
//                     into the run's next generation;
// and answers, as JSON, what the coordinator decides from: the run, its jobs
// and their states (one squeue), and the gate's files
// (runs/race_gate_files.hpp). One call carries one verb (--grant,
// --stand-down or --open-round, or none: it only reads); the gate's state is
// read once into a GateView, the call decided from it alone (decide_gate,
// pure), and only then written.
#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <string>

#include "runs/run_store.hpp"

#include "runs/job_states.hpp"
#include "runs/race_gate_files.hpp"
#include "slurm/context.hpp"

namespace ddpctl {

// What one call asks of the gate: one verb, or only to say its state.
enum class GateVerb { Read, Grant, StandDown, OpenRound };

constexpr size_t kGateEvents = 200;

struct RaceGateRequest {
  std::string runs_root;
  std::string coordinator;  // the race's run on the machine that submitted
  std::string site;         // --site: the host the run's gate was submitted as ("": any, the newest)
  std::string grant;        // --grant JOB
  std::string stand_down;   // --stand-down "SITE JOB TIME" of the winner
  int round = 0;            // --round (0: the newest here)
  int open_round = 0;       // --open-round
  std::string because;      // --because
  bool resubmit = false;    // --resubmit
  // --events-after SEQ: the answer carries the run's events after it (at
  // most kGateEvents a call; "events_more" when more wait), for the
  // coordinator to relay into the race's one stream (docs/json.md); -1:
  // none asked.
  long long events_after = -1;
  // The call's one verb (from the options above); a UserError when it asks
  // more than one.
  GateVerb verb() const;
};

// The gate's state as one call reads it, once: its files, the run's race
// jobs (id -> label) and their states (one squeue).
struct GateView {
  GateState gate;
  std::map<std::string, std::string> jobs;
  JobStates states;
};

// What the call does, decided from the view alone (decide_gate), then done.
struct GatePlan {
  std::string error;                // refused, saying why (nothing written)
  std::optional<std::string> grant; // write the round's grant for this job
  bool release = false;             // and release it: it stood down held for want of a grant in time
  std::optional<std::string> stand_down;  // write stand-down (this line), and cancel:
  std::vector<std::string> cancel;        // every job of the run still queued or running
  int open_round = 0;               // open round N here (mkdir), and with `resubmit`
  bool resubmit = false;            // submit every shape again into it
};
GatePlan decide_gate(const GateView& view, const RaceGateRequest& req);

// The newest run under `root` that is the race's site `site` (its gate names
// `coordinator` and `site`; "" : any site).
std::optional<Run> race_site_run(const std::string& root, const std::string& coordinator,
                                 const std::string& site = "");

nlohmann::json race_gate(const RaceGateRequest& req, Context& ctx);

}  // namespace ddpctl
