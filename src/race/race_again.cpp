#include "race/race_again.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>  // environ (g++ defines _GNU_SOURCE)

#include "base/files.hpp"
#include "runs/job_states.hpp"
#include "slurm/slurm_parse_nodes.hpp"
#include "explain/race.hpp"
#include "race/race_submit.hpp"
#include "submit/earlier_runs.hpp"
#include "race/race_waiting.hpp"
#include "base/text.hpp"


namespace ddpctl {

namespace fs = std::filesystem;

namespace {

// The shapes to submit again: the ranking's (dropped shapes stay out), else
// every shape, without the requeued winner's (its job is still queued).
std::vector<std::string> shapes_to_race(const Run& run, const RaceState& race, const std::string& winner_label) {
  std::vector<std::string> order;
  if (!race.ranking.empty()) {
    for (const auto& r : race.ranking)
      if (!r.dropped && r.label != winner_label) order.push_back(r.label);
    return order;
  }
  for (const auto& s : run.shapes)
    if (s.label != winner_label) order.push_back(s.label);
  return order;
}

// The nodes the requeued winner's job leaves out now that its script did
// not ask to (Slurm's ExcNodeList less the script's --exclude): the node
// check's bad nodes, watchdog.exclude_slow's slow ones. The shapes raced
// again leave them out too; a sick node is not trusted by another shape.
std::vector<std::string> nodes_left_out(const Run& run, const RaceEvent& winner, SlurmClient& slurm, Output& out) {
  CommandResult show = slurm.raw({"scontrol", "show", "job", "-o", winner.job_id});
  if (!show.ok()) {
    out.warning(fmt::format("the nodes job {} leaves out are not known, so the shapes raced again do not leave "
                            "them out: {}",
                            winner.job_id, show.describe()));
    return {};
  }
  std::vector<std::string> own;
  if (const RunShape* shape = run.shape(winner.label)) {
    try {
      std::vector<std::string> args = sbatch_leave_out(read_file(run.dir + "/" + shape->script), {});
      if (!args.empty()) own = expand_hostlist(args.front().substr(std::string("--exclude=").size()));
    } catch (const std::exception&) {
      // no script to tell the shape's own exclusions: every excluded node goes
    }
  }
  std::vector<std::string> left_out;
  for (const auto& n : job_node_list(show.out, "ExcNodeList"))
    if (std::find(own.begin(), own.end(), n) == own.end()) left_out.push_back(n);
  return left_out;
}

}  // namespace

// Inside a job, sbatch would hand the job's own SLURM_* variables to the new
// job (srun there reads SLURM_CPUS_PER_TASK, SLURM_NTASKS, ...): they go,
// SLURM_CONF stays (it says which cluster).
void forget_job_environment() {
  if (!std::getenv("SLURM_JOB_ID")) return;
  std::vector<std::string> names;
  for (char** e = environ; *e; ++e) {
    std::string entry = *e;
    std::string name = entry.substr(0, entry.find('='));
    if (name.rfind("SLURM_", 0) == 0 && name != "SLURM_CONF") names.push_back(name);
  }
  for (const auto& n : names) unsetenv(n.c_str());
}

namespace {

// Opens generation current + 1 of the race for `winner`'s requeue (`reason`)
// and submits the other shapes into it, once: see race_again.
RaceAgain open_next_generation(Run& run, const RaceState& race, const RaceEvent& winner, const std::string& reason,
                               const std::vector<std::string>& also_leave_out, Context& ctx, Output& out) {
  RaceAgain result;
  int current = static_cast<int>(race.generations.size());
  result.generation = current;
  // One re-race per requeue, whoever asks: the lock keeps two ddpctls from
  // submitting at once, the mkdir keeps the requeued winner's new attempt
  // (the job script opens the generation itself then) from racing this.
  IdentityLock lock(fs::path(run.dir).parent_path().string(), run.spec_hash, ctx, out);
  int next = current + 1;
  std::string gen_dir = fmt::format("{}/gen.{}", race_dir(run), next);
  if (mkdir(gen_dir.c_str(), 0755) != 0) {
    result.why_not = errno == EEXIST ? fmt::format("generation {} was already opened", next)
                                     : fmt::format("cannot create {}: {}", gen_dir, std::strerror(errno));
    return result;
  }
  result.opened = true;
  result.generation = next;
  std::vector<std::string> leave_out = nodes_left_out(run, winner, ctx.slurm, out);
  for (const auto& n : also_leave_out)
    if (std::find(leave_out.begin(), leave_out.end(), n) == leave_out.end()) leave_out.push_back(n);
  result.why = fmt::format("job {} (shape {}), the winner of generation {}, {}", winner.job_id, winner.label, current,
                           reason);
  if (!leave_out.empty())
    result.why += fmt::format("; {} left out, as job {} leaves {}", join(leave_out, ", "), winner.job_id,
                              leave_out.size() == 1 ? "it" : "them");
  fs::create_directories(race_jobs_dir(run, next));
  write_file_atomic(gen_dir + "/why", fmt::format("{:.3f} {}\n", static_cast<double>(ctx.clock.now()), result.why));
  // The requeued winner is one of the new generation's jobs: if another
  // shape starts first, it is cancelled like any loser.
  record_race_job(run, winner.label, winner.job_id, next);
  out.line(fmt::format("race: generation {} opened: {}", next, result.why));
  forget_job_environment();
  result.submitted =
      submit_race_shapes(run, shapes_to_race(run, race, winner.label), next, ctx.slurm, out, "", leave_out);
  return result;
}

}  // namespace

RaceAgain race_again(Run& run, const std::string& requeuing_job, Context& ctx, Output& out,
                     const std::vector<std::string>& also_leave_out, const std::string& because) {
  RaceAgain result;
  RaceState race = read_race(run);
  if (!race.is_race) {
    result.why_not = "not a race group";
    return result;
  }
  if (run.grid) {
    // Race, then sweep (docs/race.md): the grid's other cells run on the
    // shape that won; its first cell waits for that shape like they do.
    result.why_not = "a grid's raced first cell is not raced again: the grid runs on the shape that won";
    return result;
  }
  int current = static_cast<int>(race.generations.size());
  result.generation = current;
  if (!race.winner()) {
    result.why_not = fmt::format("generation {} has no winner yet", current);
    return result;
  }
  const RaceEvent winner = *race.winner();
  const RunShape* shape = run.shape(winner.label);
  int max_generations = 1 + (shape ? shape->max_requeues : 0);
  std::string reason;
  if (!requeuing_job.empty()) {
    if (requeuing_job != winner.job_id) {
      result.why_not = fmt::format("job {} is not the winner of generation {} (job {})", requeuing_job, current,
                                   winner.job_id);
      return result;
    }
    // One line: the generation's why is one line of its file.
    std::string said = because;
    std::replace(said.begin(), said.end(), '\n', ' ');
    reason = "requeued itself (" + (said.empty() ? std::string("time limit") : said) + ")";
  } else {
    JobStates states = lookup_jobs(ctx.slurm, {winner.job_id});
    const Job& job = states.jobs.at(winner.job_id);
    if (!requeued(job)) {
      result.why_not = fmt::format("the winner, job {}, is {}", winner.job_id, state_name(job.state));
      return result;
    }
    bool said = !job.reason.empty() && job.reason != "None";
    reason = fmt::format("requeued ({}{})", state_name(job.state), said ? ", " + job.reason : "");
  }
  if (current >= max_generations) {
    result.why_not = fmt::format("the group has had {} generation(s), requeue.max_restarts ({}) allows {}", current,
                                 shape ? shape->max_requeues : 0, max_generations);
    return result;
  }
  return open_next_generation(run, race, winner, reason, also_leave_out, ctx, out);
}

RaceAgain race_again_for_round(Run& run, int round, const std::string& why, Context& ctx, Output& out) {
  RaceAgain result;
  RaceState race = read_race(run);
  if (!race.is_race || run.grid) {
    result.why_not = run.grid ? "a grid's raced first cell is not raced again: the grid runs on the shape that won"
                              : "not a race group";
    return result;
  }
  const int current = static_cast<int>(race.generations.size());
  result.generation = current;
  IdentityLock lock(fs::path(run.dir).parent_path().string(), run.spec_hash, ctx, out);
  const int next = current + 1;
  const std::string gen_dir = fmt::format("{}/gen.{}", race_dir(run), next);
  if (mkdir(gen_dir.c_str(), 0755) != 0) {
    result.why_not = errno == EEXIST ? fmt::format("generation {} was already opened", next)
                                     : fmt::format("cannot create {}: {}", gen_dir, std::strerror(errno));
    return result;
  }
  result.opened = true;
  result.generation = next;
  std::string said = why;
  std::replace(said.begin(), said.end(), '\n', ' ');
  result.why = fmt::format("round {} of the race across sites: {}", round, said);
  fs::create_directories(race_jobs_dir(run, next));
  write_file_atomic(gen_dir + "/why", fmt::format("{:.3f} {}\n", static_cast<double>(ctx.clock.now()), result.why));
  out.line(fmt::format("race: generation {} opened: {}", next, result.why));
  result.submitted = submit_race_shapes(run, shapes_to_race(run, race, ""), next, ctx.slurm, out);
  return result;
}

std::vector<RaceAgain> race_again_in(const std::string& root, const std::vector<std::string>& targets, long long now,
                                     Context& ctx, Output& out) {
  std::vector<Run> runs = race_runs(root, targets, now, false);
  std::vector<RaceAgain> done;
  for (const auto& w : requeued_winners(runs, ctx.slurm)) {
    RaceAgain r = race_again(*w.run, "", ctx, out);
    if (r.opened) done.push_back(r);
  }
  return done;
}

}  // namespace ddpctl
