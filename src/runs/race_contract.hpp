#pragma once
// The race's protocol on disk (docs/race.md), in one table: every file and
// folder a race group leaves under its run's race/, who writes it and what
// it holds, for the job script (templates/race.sh.mustache, which render.cpp
// gives these names as `race_<var>`), the run store's readers
// (race_files.hpp, race_gate_files.hpp) and the coordinator's and a site's
// lines. Like job_contract.hpp, the names and line forms never change: a
// job rendered by one ddpctl may be read, granted or raced again by another.
//
//   claim[.N]/         the generation's claim, made by mkdir: the first shape to start wins
//   claim[.N]/winner   "<job> <label> <time> <attempt>", written by the winner
//   jobs/<label>       generation 1's job of each shape: "<job>"
//   gen.N/             generation N (a re-race after the winner was requeued)
//   gen.N/why          "<time> <why>"
//   gen.N/jobs/<label> generation N's jobs
//   cancelled.<job>    "<job> <time>", a loser the winner cancelled
//   stood-down.<job>   "<job> <label> <time>", a loser that started and stood down
//   ranking.json       the ranking it was submitted with
//   gate/              across sites: this site's gate (race_gate_files.hpp)
//   gate/site.json     {coordinator, site, gate_s}
//   gate/round.N/      round N of a re-race across sites, made once by mkdir
//   <round>/opened     "<time> <why>", the coordinator opened the round
//   <round>/at.<job>   "<job> <label> <time> <attempt>": waits at the gate
//   <round>/grant      "<job> <site> <time>": the one grant (that job trains)
//   <round>/stand-down "<site> <job> <time>" of the winner, or "cancelled <time>"
//   <round>/passed.<job>  "<job> <label> <time> <attempt> <seconds it waited>"
//   <round>/timeout.<job> "<job> <label> <time> <attempt>": no word in time, requeued held
#include <optional>
#include <string>
#include <vector>

namespace ddpctl {

enum class RaceFile {
  Claim,        // claim, claim.N
  Winner,       // in a claim
  Jobs,         // jobs/, gen.N/jobs/
  Generation,   // gen.N
  Why,          // in gen.N
  Cancelled,    // cancelled.<job>
  StoodDown,    // stood-down.<job>
  Ranking,      // ranking.json
  Gate,         // gate/
  GateSite,     // gate/site.json
  Round,        // gate/round.N
  Opened,       // in a round
  AtGate,       // at.<job>
  Grant,        // grant
  StandDown,    // stand-down
  Passed,       // passed.<job>
  Timeout,      // timeout.<job>
};
const std::vector<RaceFile>& race_files_in_table();
// Its name, or for a file a job's id, label or a number follows, its
// prefix: "claim", "winner", "cancelled.", "at.", "round.", ...
std::string race_file_name(RaceFile f);
// render's `race_<var>` for it: "claim", "winner", "cancelled", "at", ...
std::string race_file_var(RaceFile f);

// The event lines of a race's files: "<job> <label> <time> [<attempt>]"
// (winner, at, timeout, stood-down, passed: its waiting seconds after),
// "<job> <time>" (cancelled).
struct RaceLine {
  std::string job_id, label;
  double at = 0;    // Unix time, seconds
  int attempt = 0;  // the job's SLURM_RESTART_COUNT then
};
std::string race_event_line(const RaceLine& l);
// nullopt when the text is not such a line (a job id must be Slurm's).
std::optional<RaceLine> parse_race_event_line(const std::string& text);
std::string cancelled_line(const std::string& job_id, double at);

// A gate's grant: "<job> <site> <time>".
struct GrantLine {
  std::string job_id, site;
  double at = 0;
};
std::string grant_line(const GrantLine& g);
std::optional<GrantLine> parse_grant_line(const std::string& text);

// The word of the size line a relayed checkpoint begins with
// (base/sized_stream.hpp): "ddpctl-checkpoint BYTES".
inline constexpr const char* kCheckpointSizeWord = "ddpctl-checkpoint";

}  // namespace ddpctl
