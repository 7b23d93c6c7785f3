#pragma once
// A race group's ranking and outcome (hybrid mode, docs/race.md): the shapes
// ranked by estimated start or predicted finish, the ranking as a table, and
// what became of the group, from the race's files (runs/race_files.hpp) and
// the jobs' states.
#include <string>
#include <vector>

#include "runs/job_states.hpp"
#include "runs/race_files.hpp"

namespace ddpctl {

// Earliest estimated start first (ties keep the given order, which is the
// spec's), then shapes Slurm gave no estimate for, then the dropped ones.
std::vector<RankedShape> rank_shapes(std::vector<RankedShape> shapes);

// --rank-by finish. With a run time for every shape still in: each one's
// predicted finish (its estimated start, or `now`, plus the run time); a
// shape that even started `now` would finish after the best predicted finish
// is dropped, saying so; the rest go earliest finish first (then shapes
// without an estimated start, then the dropped). When a shape has no run
// time, the ranking is by start and `note` says why.
std::vector<RankedShape> rank_by_finish(std::vector<RankedShape> shapes, long long now, std::string& note);

// The ranking as a table: rank, shape, estimated start (relative to `now`, and
// the local clock time), the predicted run time and finish when known, nodes,
// partition, and why a shape was dropped or has no estimate.
std::vector<std::string> format_ranking(const std::vector<RankedShape>& ranking, long long now);

// What became of a group: Won once a claim names its winner; Failed when
// every shape's job has ended (in `states`) and none claimed the group;
// Racing otherwise. status and `--wait` both ask this.
enum class RaceOutcome { Racing, Won, Failed };
RaceOutcome race_outcome(const RaceState& race, const JobStates& states);

}  // namespace ddpctl
