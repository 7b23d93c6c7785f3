#pragma once
// What waits on an act after a race (docs/race.md): a requeued race winner
// whose group nobody has raced again, and a raced grid whose first cell's
// race is won but whose other cells are not submitted. The acting commands
// (race-again, sweep continue, the job itself) find them here and act;
// `status` and `logs` only read them and say which command acts: reading
// never submits.
#include <string>
#include <vector>

#include "runs/job_states.hpp"
#include "runs/run_store.hpp"
#include "slurm/slurm.hpp"

namespace ddpctl {

// A winner that claimed while running and is now waiting again was
// requeued. Only once it waits: while Slurm still shows it REQUEUED or
// COMPLETING, its old processes may run (up to KillWait), and a new winner
// must not start training beside them or load a checkpoint they still write.
bool requeued(const Job& job);

// The race groups among `targets` (runs by name, id or path; job ids and
// experiments are skipped), or without targets the recent ones (as status
// shows them: not ended for good, or ended within kRecentRunsS of `now`).
// `grids`: only raced grids.
std::vector<Run> race_runs(const std::string& root, const std::vector<std::string>& targets, long long now,
                           bool grids);

// The groups of `runs` whose current winner Slurm shows requeued and waiting
// while the group may race again (fewer generations than 1 + the winner's
// requeue.max_restarts, the winner's end not recorded): one squeue for all.
struct RequeuedWinner {
  Run* run = nullptr;
  std::string job_id;
};
std::vector<RequeuedWinner> requeued_winners(std::vector<Run>& runs, SlurmClient& slurm);

// The raced grids of `runs` whose first cell's race has a winner and that
// have no attempt but the race's, none cancelled: the other cells wait for
// `sweep continue`.
// `claimed_before`: only those whose winner claimed before that time (Unix
// seconds; 0: any).
std::vector<Run*> grids_awaiting_cells(std::vector<Run>& runs, double claimed_before = 0);

// The winning job runs `sweep continue` for at most this long after its
// claim (templates/race.sh.mustache): a grid still waiting after it needs a
// hand.
inline constexpr double kGridContinueGraceS = 150;

// status's and logs' notes: each act that waits, and the command that does
// it. Reads only: nothing is submitted.
std::vector<std::string> waiting_act_notes(const std::string& root, const std::vector<std::string>& targets,
                                           long long now, SlurmClient& slurm);

}  // namespace ddpctl
