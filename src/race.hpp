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

#include "runs.hpp"

namespace ddpctl {

struct RaceEvent {
  std::string job_id, label;
  double at = 0;  // Unix time, seconds
};

struct RaceState {
  bool is_race = false;
  std::optional<RaceEvent> winner;                  // claim/winner
  bool claimed = false;                             // claim/ exists (winner may still be writing)
  std::map<std::string, std::string> job_of_label;  // race/jobs/<label>
  std::vector<RaceEvent> cancelled;                 // by the winner: cancelled.<id>
  std::vector<RaceEvent> stood_down;                // losers that started: stood-down.<id>
};

std::string race_dir(const Run& run);
// Creates race/ and race/jobs/ in the run directory.
void init_race(const Run& run);
RaceState read_race(const Run& run);
// Records `job_id` as the job of shape `label` (atomically), for the winner to cancel.
void record_race_job(const Run& run, const std::string& label, const std::string& job_id);

}  // namespace ddpctl
