#include "race/race_command.hpp"

#include <fmt/format.h>

#include "runs/run_json.hpp"
#include "base/text.hpp"
#include "explain/failure.hpp"
#include "explain/race.hpp"
#include "runs/job_states.hpp"
#include "race/race_again.hpp"
#include "race/race_rank.hpp"
#include "race/race_submit.hpp"
#include "submit/submit.hpp"

namespace ddpctl {

void wait_for_race(Context& ctx, const Run& given, bool follow, Output& out) {
  Run run = given;
  long long submitted = parse_utc_iso(run.created_at);
  for (;;) {
    RaceState race = read_race(run);
    if (race.winner()) {
      out.fact("winner", {{"shape", race.winner()->label}, {"job", race.winner()->job_id}});
      size_t generation = race.generations.size();
      if (generation > 1)
        out.line(fmt::format("race: generation {} won by shape {} (job {}) {:.1f} s after the re-race",
                             generation, race.winner()->label, race.winner()->job_id,
                             race.winner()->at - race.generations.back().opened_at));
      else
        out.line(fmt::format("race: won by shape {} (job {}) {:.1f} s after submission", race.winner()->label,
                             race.winner()->job_id, race.winner()->at - static_cast<double>(submitted)));
      for (const auto& [label, id] : race.job_of_label())
        if (id != race.winner()->job_id) out.line(fmt::format("race: shape {} (job {}) stands down", label, id));
      if (!follow) return;
      const Attempt* winner = nullptr;
      for (const auto& a : run.attempts)
        if (a.job_id == race.winner()->job_id) winner = &a;
      if (!winner) return;
      try {
        return wait_for_job(ctx, run, *winner, true, out);
      } catch (const UserError&) {
        // Cancelled by the winner of a re-race: follow that one instead.
        run = load_run(run.dir);
        RaceState now = read_race(run);
        if (now.generations.size() == generation) throw;
        out.line(fmt::format("race: job {} was requeued; generation {}: {}", race.winner()->job_id,
                             now.generations.size(), now.generations.back().why));
        continue;
      }
    }
    std::vector<std::string> ids;
    for (const auto& [label, id] : race.job_of_label()) ids.push_back(id);
    JobStates states = lookup_jobs(ctx.slurm, ids);
    // A job can end right after claiming; read the claim once more before giving up.
    if (race_outcome(race, states) == RaceOutcome::Failed && race_outcome(read_race(run), states) == RaceOutcome::Failed) {
      // How each shape's job ended: they failed before their training began.
      std::vector<std::string> ends;
      for (const auto& [label, id] : race.job_of_label()) {
        const Job& job = states.jobs.at(id);
        std::string how = describe_exit(job.exit);
        if (const RunShape* shape = run.shape(label))
          if (auto f = explain_failure(*shape, job, ctx.slurm)) how = describe_failure(*f);
        ends.push_back(fmt::format("shape {} (job {}) ended {}{}", label, id, state_name(job.state),
                                   how.empty() ? "" : ": " + how));
      }
      throw UserError(fmt::format("race failed: every shape's job ended before claiming the group: {}; see `ddpctl "
                                  "status {}`",
                                  join(ends, "; "), run.id));
    }
    ctx.clock.sleep(ctx.poll_s);
  }
}

namespace {

void print_plan(const std::vector<RankedShape>& ranking, bool by_finish, const std::string& note, long long now,
                Output& out) {
  for (const auto& line : ranking_lines(ranking, now, by_finish, note)) out.line(line);
  throw_if_none_runs(ranking);
  out.line(fmt::format("a race would submit {}; nothing was submitted", join(kept_labels(ranking), ", ")));
}

}  // namespace

double race_command(const RaceRequest& req, bool plan, bool wait, bool follow, Context& ctx, Output& out, Output& side) {
  RaceGroup group = load_race_group(req.specs, req.sets, req.across);
  if (plan) {
    std::string note;
    std::vector<RankedShape> ranking = plan_race(group, req, ctx.slurm, note);
    print_plan(ranking, req.rank_by != "start", note, ctx.clock.now(), out);
    out.fact("plan", true);
    out.fact("would_race", kept_labels(ranking));
    return 0;
  }
  if (!req.dry_run) try {
      race_again_in(req.runs_root, {}, ctx.clock.now(), ctx, side);
    } catch (const UserError& e) {
      side.warning(std::string("a requeued race winner could not be re-raced: ") + e.what());
    }
  RaceSubmission r = submit_race(group, req, ctx, out);
  switch (r.kind) {
    case RaceSubmission::Kind::AlreadySubmitted:
      out.fact("already", true);
      out.fact("run", r.active.run_id);
      out.fact("jobs", nlohmann::json::array({{{"job", r.active.job_id}, {"run", r.active.run_id}}}));
      out.line(fmt::format("already submitted: job {} of race run {} is still queued or running; not submitting it "
                           "again (--again submits another)",
                           r.active.job_id, r.active.run_id));
      return r.lock_waited_s;
    case RaceSubmission::Kind::DryRun:
      out.fact("dry_run", true);
      out.line(fmt::format("dry run: {} passed validation{}; nothing was submitted", join(req.specs, ", "),
                           !req.preflight || !req.rank_by.empty() ? "" : " and the cluster preflight"));
      if (!req.rank_by.empty()) print_plan(r.ranking, req.rank_by == "finish", r.ranking_note, ctx.clock.now(), out);
      else out.line(fmt::format("would race shapes {}: each submitted with sbatch; the first to start trains",
                                join(group.labels(), ", ")));
      return r.lock_waited_s;
    case RaceSubmission::Kind::Submitted:
      break;
  }
  state_run(out, r.run);
  out.fact("race", true);
  out.line(fmt::format("submitted race of {} as run {}: the first to start trains, the others are cancelled",
                       join(r.submitted, ", "), r.run.id));
  out.line(fmt::format("  status: ddpctl status {}\n  logs:   ddpctl logs {}", r.run.id, r.run.id));
  if (wait || follow) wait_for_race(ctx, r.run, follow, out);
  return r.lock_waited_s;
}

}  // namespace ddpctl
