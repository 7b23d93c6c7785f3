#pragma once
// Race groups (hybrid mode): every shape of a run is submitted; the scripts
// claim <run dir>/race/claim with mkdir when they start, so the first shape
// to start wins and the rest stand down, decided inside the jobs. ddpctl
// records each job id in race/jobs/<label> (the winner cancels those) and
// reads the outcome back from the same folder. docs/race.md tells the rules.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "jobs.hpp"
#include "runs.hpp"
#include "slurm.hpp"

namespace ddpctl {

struct RaceEvent {
  std::string job_id, label;
  double at = 0;  // Unix time, seconds
};

// One shape in a ranking by estimated start (--rank-by-estimate, race --plan).
struct RankedShape {
  std::string label;
  StartEstimate estimate;
  bool dropped = false;     // it cannot run: the preflight's or Slurm's reason
  std::string why_dropped;
};

// Earliest estimated start first (ties keep the given order, which is the
// spec's), then shapes Slurm gave no estimate for, then the dropped ones.
std::vector<RankedShape> rank_shapes(std::vector<RankedShape> shapes);
// The ranking as a table: rank, shape, estimated start (relative to `now`, and
// the local clock time), nodes, partition, and why a shape was dropped or has
// no estimate.
std::vector<std::string> format_ranking(const std::vector<RankedShape>& ranking, long long now);

struct RaceState {
  bool is_race = false;
  std::optional<RaceEvent> winner;                  // claim/winner
  bool claimed = false;                             // claim/ exists (winner may still be writing)
  std::map<std::string, std::string> job_of_label;  // race/jobs/<label>
  std::vector<RaceEvent> cancelled;                 // by the winner: cancelled.<id>
  std::vector<RaceEvent> stood_down;                // losers that started: stood-down.<id>
  std::vector<RankedShape> ranking;                 // ranking.json, when ranked by estimate
};

// What became of a group: Won once a claim names its winner; Failed when
// every shape's job has ended (in `states`) and none claimed the group;
// Racing otherwise. status and `--wait` both ask this.
enum class RaceOutcome { Racing, Won, Failed };
RaceOutcome race_outcome(const RaceState& race, const JobStates& states);

std::string race_dir(const Run& run);
// Creates race/ and race/jobs/ in the run directory.
void init_race(const Run& run);
RaceState read_race(const Run& run);
// Keeps the ranking in race/ranking.json (status shows the dropped shapes).
void record_ranking(const Run& run, const std::vector<RankedShape>& ranking);
// Records `job_id` as the job of shape `label` (atomically), for the winner to cancel.
void record_race_job(const Run& run, const std::string& label, const std::string& job_id);

}  // namespace ddpctl
