#pragma once
// The gate of a race across sites (docs/race.md "Across sites"), one site's
// side: race/gate/ in that site's run. A job that wins its site's claim
// waits at the gate until the coordinator (on the machine that submitted)
// grants it or stands the site down; the files say who did what:
//   site.json      {coordinator, site, gate_s}, written at submission
//   at.<job>       the job waits at the gate: "<job> <label> <time> <attempt>"
//   grant          the coordinator's grant: "<job> <site> <time>" (that job trains)
//   stand-down     another site won: "<site> <job> <time>" (every job here stands down)
//   passed.<job>   the job went through, granted: "... <seconds it waited>"
//   timeout.<job>  no word in time: the job requeued itself, held (no GPU time)
// Those are the race's first round. When the winner is requeued the race
// runs again across sites (docs/race.md "Across sites", "When the winner is
// requeued") in round N (2, 3, ...): race/gate/round.<N>/ holds the same
// files for it, made once (mkdir) by whoever comes first: the coordinator
// opening the round (its file `opened`: "<time> <why>"), or the requeued
// winner's job restarting before that, which grants itself the round (its
// `grant`, with no `opened`): it goes on training and no re-race happens.
#include <optional>
#include <string>
#include <vector>

#include "runs/race_files.hpp"
#include "runs/run_store.hpp"

namespace ddpctl {

struct GateGrant {
  std::string job_id, site;
  double at = 0;
};

struct GateState {
  bool is_gate = false;  // site.json is there: the run is one site of a race across sites
  std::string coordinator, site;
  long long gate_s = 0;
  // The newest round here and its folder; what follows is that round's.
  int round = 1;
  std::string round_dir;
  std::string opened;  // round 2 and on: the coordinator's line ("" : the requeued job opened it itself)
  std::vector<RaceEvent> at, passed, timeouts;
  std::optional<GateGrant> grant;
  std::optional<std::string> stand_down;  // its line: who won instead
};

std::string gate_dir(const Run& run);
// race/gate/ and its site.json.
void init_gate(const Run& run, const std::string& coordinator, const std::string& site, long long gate_s);
GateState read_gate(const Run& run);
// The folder of round `n` here (the gate itself for round 1).
std::string gate_round_dir(const Run& run, int n);
// Opens round `n` here for a re-race (mkdir, then `opened` with `why`):
// true when this call made it; false when it was there already.
bool open_gate_round(const Run& run, int n, const std::string& why, double now);
// The coordinator a run's gate names (its site.json alone, without loading
// the run), if the run is one site of a race across sites.
std::optional<std::string> gate_coordinator(const std::string& run_dir);
// The site (host) a run's gate was submitted as ("" : none said).
std::string gate_site(const std::string& run_dir);
// Writes the grant for `job_id` into a round's folder `dir` unless it has
// one (a link, so two writers cannot both win); returns the grant it holds now.
GateGrant write_grant(const std::string& dir, const std::string& job_id, const std::string& site, double now);
// Writes stand-down into a round's folder `dir` (`line`: "<site> <job>
// <time>" of the winner) unless there is one.
void write_stand_down(const std::string& dir, const std::string& line);

}  // namespace ddpctl
