#pragma once
// Re-racing a group whose winner was requeued (docs/race.md, "When the
// winner is requeued"): the next generation is opened once, by whoever gets
// there first (mkdir race/gen.N), and the other shapes are submitted into it.
#include <string>
#include <vector>

#include "runs/output.hpp"
#include "runs/run_store.hpp"
#include "slurm/context.hpp"

namespace ddpctl {

// A re-race: what `race_again` did.
struct RaceAgain {
  bool opened = false;     // a new generation was opened (and its shapes submitted)
  int generation = 0;      // the new one if opened, else the current one
  std::string why;         // opened: "job 812 (shape 1x4), the winner of generation 1, requeued (...)"
  std::string why_not;     // not opened: the reason
  std::vector<std::string> submitted;  // "job N (shape L)"
};
// When the current generation's winner was requeued (or, with
// `requeuing_job`, says it is requeueing itself now), opens the next
// generation once -- unless the winner's requeue.max_restarts is reached --
// records the winner's job in it and submits the other shapes into it. The
// first of them to start trains; the rest stand down.
// The shapes raced again leave out the nodes Slurm shows the requeued
// winner's job leaving out that its own script did not (the node check's bad
// nodes, watchdog.exclude_slow's slow ones), and `leave_out`: what a job
// requeueing itself will leave out once requeued; `because`, why it
// requeues itself (its script's words; empty: its time limit).
RaceAgain race_again(Run& run, const std::string& requeuing_job, Context& ctx, Output& out,
                     const std::vector<std::string>& leave_out = {}, const std::string& because = "");
// A race across sites raced again (docs/race.md "Across sites", "When the
// winner is requeued"): this site stood down in an earlier round, and the
// coordinator opened round `round` here because the winner at another site
// was requeued (`why`). Opens this run's next generation (mkdir, once) and
// submits every shape into it (ranking order, dropped shapes out), with the
// same scripts: the code and the spec the run was submitted with. Its
// claim's winner waits at the round's gate like the first round's.
RaceAgain race_again_for_round(Run& run, int round, const std::string& why, Context& ctx, Output& out);

// race_again for every group whose winner Slurm shows requeued and waiting
// (race_waiting.hpp) among the runs `targets` name (runs by name, id or
// path; other targets are skipped), or without targets for the runs `status`
// shows without arguments (recent_runs: active, or ended within
// kRecentRunsS) under `root`: what `race-again` without --requeuing and
// `race` do for requeues the job could not act on itself (preemption, a node
// failure, scontrol requeue).
std::vector<RaceAgain> race_again_in(const std::string& root, const std::vector<std::string>& targets, long long now,
                                     Context& ctx, Output& out);

// Inside a job, drops the job's SLURM_* variables (but SLURM_CONF) so that
// an sbatch from there does not hand them to the new job.
void forget_job_environment();

}  // namespace ddpctl
