#pragma once
// A race group's files (hybrid mode, docs/race.md; their names and lines:
// race_contract.hpp): every shape of a run is submitted; the scripts claim
// <run dir>/race/claim with mkdir when they start, so the first shape to
// start wins and the rest stand down, decided inside the jobs. ddpctl
// records each job id in race/jobs/<label> (the winner cancels those) and
// reads the outcome back from the same folder (explain/race.hpp words it).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runs/job_states.hpp"
#include "runs/run_store.hpp"
#include "slurm/slurm.hpp"
#include "slurm/slurm_job.hpp"

namespace ddpctl {

struct RaceEvent {
  std::string job_id, label;
  double at = 0;    // Unix time, seconds
  int attempt = 0;  // the job's SLURM_RESTART_COUNT when it claimed (winner files)
};

// One shape in a ranking by estimated start (--rank-by-estimate, race --plan).
struct RankedShape {
  std::string label;
  StartEstimate estimate;
  bool dropped = false;     // it cannot run, or (by finish) cannot finish first: the reason
  std::string why_dropped;
  std::optional<double> run_time_s;  // predicted from earlier runs (report.hpp's predict)
  std::string run_time_from;         // "measured", "from shape 2x1", "assumed ideal"
  std::optional<long long> finish;   // estimated start (or now) + run time
  // What holds a shape that can run (site_limits_check.hpp): a reservation in its way
  // (its estimated start is then the reservation's end at the earliest), or
  // usage that keeps it waiting.
  std::string note;
};

// One round of the race. Generation 1 is the submission (race/claim,
// race/jobs/); a re-race after the winner was requeued opens generation N
// (race/gen.N/ with its why and jobs/, claimed through race/claim.N).
struct RaceGeneration {
  int number = 1;
  bool claimed = false;                             // its claim folder exists (winner may still be writing)
  std::optional<RaceEvent> winner;                  // its claim's winner file
  std::map<std::string, std::string> job_of_label;  // its jobs/<label>
  std::string why;                                  // N >= 2: why it was opened
  double opened_at = 0;
};

struct RaceState {
  bool is_race = false;
  std::vector<RaceGeneration> generations;  // [0] is generation 1; the last is the current one
  // The current generation's winner, claim and jobs (none before a race is read).
  const std::optional<RaceEvent>& winner() const { return current().winner; }
  bool claimed() const { return current().claimed; }
  const std::map<std::string, std::string>& job_of_label() const { return current().job_of_label; }
  std::vector<RaceEvent> cancelled;                 // by the winner: cancelled.<id>
  std::vector<RaceEvent> stood_down;                // losers that started: stood-down.<id>
  std::vector<RankedShape> ranking;                 // ranking.json, when ranked by estimate

 private:
  const RaceGeneration& current() const {
    static const RaceGeneration none;
    return generations.empty() ? none : generations.back();
  }
};

std::string race_dir(const Run& run);
// One of the race's event files ("<job id> <label> <unix time> [<attempt>]",
// "<job id> <unix time>" for cancelled.<id>); nullopt when unreadable.
std::optional<RaceEvent> read_race_event(const std::string& path);
// Creates race/ and race/jobs/ in the run directory.
void init_race(const Run& run);
RaceState read_race(const Run& run);
// Generation N's claim folder (race/claim, race/claim.N) and jobs folder
// (race/jobs, race/gen.N/jobs).
std::string claim_dir(const Run& run, int generation);
std::string race_jobs_dir(const Run& run, int generation);
// The generation in which `job_id` won, if it did.
const RaceGeneration* generation_won_by(const RaceState& race, const std::string& job_id);
// Keeps the ranking in race/ranking.json (status shows the dropped shapes).
void record_ranking(const Run& run, const std::vector<RankedShape>& ranking);
// Records `job_id` as the job of shape `label` in `generation` (atomically),
// for that generation's winner to cancel.
void record_race_job(const Run& run, const std::string& label, const std::string& job_id, int generation = 1);

}  // namespace ddpctl
