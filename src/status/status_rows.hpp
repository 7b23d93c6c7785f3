#pragma once
// The rows of `ddpctl status`'s table, one kind each: a job's (its words
// from status_words.hpp's table), a grid cell's, a cell waiting for its
// race, an attempt that made no job, a race's group, a shape the race left
// out, a grid's sweep in one line.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "explain/experiments.hpp"
#include "explain/race.hpp"
#include "explain/status_grid.hpp"
#include "runs/output.hpp"
#include "status/status_words.hpp"

namespace ddpctl {

struct StatusRow {
  std::string run, job, shape;
  std::string state;  // a job state's name, or UNCONFIRMED, REJECTED, ABSENT, WON, RACING, DROPPED, FAILED, WAITING, STALLED
  Tone tone = Tone::Plain;
  std::string info, time, nodes, gpus;  // empty: shown as "-"
  nlohmann::json json;                  // the row for --json
};

// A job's row: Slurm's record, its words, its times and size.
StatusRow job_row(const JobFacts& facts);
// A grid cell's row (facts.cells and facts.cell set): the job's row under
// the cell's name and its task's id.
StatusRow cell_row(const JobFacts& facts);
// A cell of a raced grid that waits for the race's winner (no attempt yet).
StatusRow waiting_cell_row(const Run& run, const std::vector<CellState>& cells, const CellState& cell);
// An attempt that made no job: rejected, unconfirmed, absent, or only intended.
StatusRow attempt_row(const JobRef& ref);
// A grid's sweep in one row: its arrays, its cells counted by state.
StatusRow grid_row(const Run& run, const std::vector<CellState>& cells);
// One row for a race group: racing, won by shape X after N s, or failed.
StatusRow race_row(const Run& run, const RaceState& race, const JobStates& states);
// A shape that --rank-by-estimate left out of the race, with the reason.
StatusRow dropped_row(const Run& run, const RankedShape& r);

}  // namespace ddpctl
