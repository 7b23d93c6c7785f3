#pragma once
// Hybrid mode's workflows (docs/race.md): `ddpctl race SPEC...`, and
// `ddpctl submit` of a spec with alternatives, submit every shape as one race
// group; the first job to start claims the group and cancels the rest.
// --rank-by-estimate and --plan ask `sbatch --test-only` when each shape
// would start. race.hpp holds the group's records; this file what is done
// with them.
#include <string>
#include <vector>

#include "slurm/context.hpp"
#include "runs/output.hpp"
#include "explain/race.hpp"
#include "script/resolve.hpp"
#include "script/runs.hpp"
#include "workflows/submit.hpp"

namespace ddpctl {

// Every spec of the race, resolved, with the shapes' labels made unique
// across specs. entries[i] is the i-th shape of the group.
struct RaceGroup {
  std::vector<ResolvedRun> parts;
  std::vector<SpecSource> specs;  // parts[k]'s file as given, and its text
  struct Entry {
    size_t part, shape;
  };
  std::vector<Entry> entries;
  std::string identity;  // run_identity of every spec, racing

  const ResolvedShape& shape(const Entry& e) const { return parts[e.part].shapes[e.shape]; }
  std::vector<std::string> labels() const;
};

// Loads and resolves each spec and checks they can race together: one
// cluster, no sweep, no spec twice, labels unique (a label used by two specs
// is prefixed with the spec's name), at least two shapes.
RaceGroup load_race_group(const std::vector<std::string>& specs, const std::vector<std::string>& sets);

struct RaceRequest {
  std::vector<std::string> specs, sets;
  std::string runs_root, templates_dir;
  bool dry_run = false, preflight = true, again = false;
  bool snapshot = true;  // false: --no-snapshot
  std::string snapshot_from;  // --snapshot-from (take_snapshot's `given`)
  // "" (submit every shape), "start" (drop shapes that cannot run, submit the
  // rest earliest start first) or "finish" (also drop shapes that cannot
  // finish first; earliest predicted finish first).
  std::string rank_by;
};

// `ddpctl submit` of a spec with alternatives (submits_as_race) races them:
// the submit's options for the race; --fit-time, which fits one shape's time
// limit, is refused.
RaceRequest race_of_submit(const SubmitRequest& req);

// The ranking as printed: a heading (what it is ranked by, and `note`), then one line per shape.
std::vector<std::string> ranking_lines(const std::vector<RankedShape>& ranking, long long now, bool by_finish,
                                       const std::string& note = "");
// The labels of the shapes a ranking keeps, in its order.
std::vector<std::string> kept_labels(const std::vector<RankedShape>& ranking);

// `race --plan`: the ranking from scripts rendered into a scratch folder;
// nothing is submitted and no run is recorded.
// Ranked by `request.rank_by` ("finish" when empty); `note` says when a
// ranking by finish fell back to start, and why.
std::vector<RankedShape> plan_race(const RaceGroup& group, const RaceRequest& request, SlurmClient& slurm,
                                   std::string& note);
// A UserError naming each shape's reason when a ranking keeps no shape.
void throw_if_none_runs(const std::vector<RankedShape>& ranking);

struct RaceSubmission {
  enum class Kind { Submitted, AlreadySubmitted, DryRun };
  Kind kind = Kind::Submitted;
  ActiveJob active;                   // AlreadySubmitted
  Run run;                            // Submitted
  std::vector<RankedShape> ranking;   // with rank_by (a dry run's too)
  std::string ranking_note;           // why a ranking by finish fell back to start
  std::vector<std::string> submitted; // Submitted: "job N (shape L)", in submission order
  double lock_waited_s = 0;
};
// [the group identity's lock] earlier runs -> preflight -> run directory and
// race folder -> scripts -> (ranking) -> each shape submitted, its job id
// recorded before the claim is looked at [lock released]. Says per shape
// what happened through `out`; throws UserError when no shape could be
// submitted.
RaceSubmission submit_race(const RaceGroup& group, const RaceRequest& request, Context& ctx, Output& out);

// Submits the shapes in `order` (labels) into `generation` of the race; each
// job id is recorded before the claim is looked at, so a winner can always
// cancel it or ddpctl does. Stops once the generation is claimed (or a newer
// one opened). Returns "job N (shape L)" per job made. With `array` (a raced
// grid's first cell: "0"), each shape is that job array (Attempt::race).
// With `leave_out` (a re-race: the nodes the requeued winner's job leaves
// out), each shape leaves them out too (sbatch_leave_out).
std::vector<std::string> submit_race_shapes(Run& run, const std::vector<std::string>& order, int generation,
                                            SlurmClient& slurm, Output& out, const std::string& array = "",
                                            const std::vector<std::string>& leave_out = {});

// sbatch's command-line options that make the job of a rendered `script`
// leave `nodes` out as well: one --exclude= with its own #SBATCH --exclude=
// nodes and these (the command line overrides the script's line). A node the
// script asks for by name (--nodelist=) cannot also be excluded: it leaves
// that list (--nodelist= of the rest, as exclude_nodes does for a requeued
// job), unless it is all the list has; then it stays, named in `kept`.
std::vector<std::string> sbatch_leave_out(const std::string& script, const std::vector<std::string>& nodes,
                                          std::vector<std::string>* kept = nullptr);

// Inside a job, drops the job's SLURM_* variables (but SLURM_CONF) so that
// an sbatch from there does not hand them to the new job.
void forget_job_environment();

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
// race_again for every group whose winner Slurm shows requeued and waiting
// (race_waiting.hpp) among the runs `targets` name (runs by name, id or
// path; other targets are skipped), or without targets for the runs `status`
// shows without arguments (recent_runs: active, or ended within
// kRecentRunsS) under `root`: what `race-again` without --requeuing and
// `race` do for requeues the job could not act on itself (preemption, a node
// failure, scontrol requeue).
std::vector<RaceAgain> race_again_in(const std::string& root, const std::vector<std::string>& targets, long long now,
                                     Context& ctx, Output& out);

// Waits until the group has a winner, says who won, after how long, and who
// stands down; with `follow`, then follows the winner to its end. Throws
// UserError when every shape's job ended without claiming the group.
void wait_for_race(Context& ctx, const Run& run, bool follow, Output& out);

// `race` (and `submit` of a spec with alternatives) as a whole: with `plan`,
// the ranking and nothing submitted; else requeued race winners raced again
// first (not for a dry run; a failure is a warning on `side`), then the
// group submitted or dry-run, each outcome a line on `out`, and with
// `wait`/`follow` the wait for a winner (and its end). Returns how long the
// run's lock held it up.
double race_command(const RaceRequest& req, bool plan, bool wait, bool follow, Context& ctx, Output& out, Output& side);

}  // namespace ddpctl
