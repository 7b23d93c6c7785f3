#pragma once
// The cells of a grid's sweep (sweep_grid.hpp) as Slurm's records of its
// arrays say: each cell's task (its own job id, state, times), a pending
// cell from the collapsed record of its array ("123_[4-19%4]"), and the
// sweep in one line ("12 done, 3 running, 4 pending (throttled %4), 1 failed").
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "slurm/slurm_job.hpp"
#include "runs/run_record.hpp"

namespace ddpctl {

struct CellState {
  const RunCell* cell = nullptr;
  const Attempt* attempt = nullptr;  // the latest array that ran it; null: never submitted
  std::string shown_id;              // "123_4", as squeue and sacct show the task
  Job job;                           // its record; state Unknown when Slurm did not say
  bool throttled = false;            // pending for the array's %K (JobArrayTaskLimit)
  // Race, then sweep (docs/race.md): the first cell's jobs, one per shape,
  // while its race has no winner (`attempt` is the first of them) ...
  std::vector<const Attempt*> racing;
  // ... and the cells that wait for that winner to be submitted on its shape.
  bool waits_for_race = false;
};

// Each cell of `run` (it has a grid) from `records`: squeue's and sacct's
// records of the run's arrays (jobs() and accounting() of the arrays' ids),
// squeue's first; a cell whose end the ledger holds from there (source
// "ledger"). A cell's latest array attempt is the one that names it; a
// raced grid's first cell's is its race winner's (run/race, read here).
std::vector<CellState> cell_states(const Run& run, const std::vector<Job>& records);

// The array ids of a grid run's submitted attempts (`unended_only`: those
// whose end the ledger does not hold yet).
std::vector<std::string> array_ids(const Run& run, bool unended_only = false);

// Records in the run's ledger the cells' ends that are final: squeue
// answered without them and sacct says they ended (job_states.hpp's rule); an
// array whose every cell has one gets its own end (the run can then end
// for good, as status's window and index ask). `earlier`: sacct's earlier
// attempts of requeued cells, by the task's own job id, kept with its end.
// `records` (cell_states'): an array whose every cell a later array took
// over before its ends were kept gets them from its own records there.
// Returns how many it recorded; throws as update_ledger does.
int record_cell_ends(Run& run, const std::vector<CellState>& cells, bool squeue_answered, long long now,
                     const std::map<std::string, std::vector<Job>>& earlier = {},
                     const std::vector<Job>& records = {});

// A raced grid whose race was won: the losers' jobs (cancelled by the
// winner, or stood down: run/race says which) that squeue, having answered,
// no longer lists get their end in the ledger, so an ended sweep costs no
// Slurm call. `records` as for cell_states. Returns how many it recorded.
int record_race_losers(Run& run, const std::vector<Job>& records, bool squeue_answered, long long now);

// "4 cells: 2 done, 1 running, 1 pending (throttled %2)"; failures by kind.
std::string grid_summary(const std::vector<CellState>& cells, std::optional<int> max_parallel);
// The sweep's state in one word: RUNNING while a cell runs, PENDING while
// one waits (none running), else COMPLETED when every cell did, else FAILED.
JobState grid_state(const std::vector<CellState>& cells);

}  // namespace ddpctl
