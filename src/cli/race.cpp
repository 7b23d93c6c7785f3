// ddpctl race SPEC...: every shape of the specs as one race group; the first
// to start trains (docs/race.md). `submit` of a spec with alternatives too.
#include <ctime>
#include <fmt/format.h>
#include <iostream>
#include <memory>

#include "app.hpp"
#include "common.hpp"
#include "text.hpp"

namespace ddpctl::cli {

namespace {

void print_plan(const std::vector<RankedShape>& ranking, bool by_finish, const std::string& note) {
  for (const auto& line : ranking_lines(ranking, std::time(nullptr), by_finish, note)) std::cout << line << '\n';
  throw_if_none_runs(ranking);
  std::cout << fmt::format("a race would submit {}; nothing was submitted\n", join(kept_labels(ranking), ", "));
}

}  // namespace

void race_command(const RaceRequest& req, bool plan, bool wait, bool follow, Context& ctx) {
  RaceGroup group = load_race_group(req.specs, req.sets);
  if (!plan && !req.dry_run) race_again_if_requeued(req.runs_root, {}, ctx);
  if (plan) {
    std::string note;
    std::vector<RankedShape> ranking = plan_race(group, req, ctx.slurm, note);
    return print_plan(ranking, req.rank_by != "start", note);
  }
  ConsoleOutput out;
  RaceSubmission r = submit_race(group, req, ctx, out);
  note_lock_wait(r.lock_waited_s);
  switch (r.kind) {
    case RaceSubmission::Kind::AlreadySubmitted:
      std::cout << fmt::format(
          "already submitted: job {} of race run {} is still queued or running; not submitting it again "
          "(--again submits another)\n",
          r.active.job_id, r.active.run_id);
      return;
    case RaceSubmission::Kind::DryRun:
      std::cout << fmt::format("dry run: {} passed validation{}; nothing was submitted\n", join(req.specs, ", "),
                               !req.preflight || !req.rank_by.empty() ? "" : " and the cluster preflight");
      if (!req.rank_by.empty()) return print_plan(r.ranking, req.rank_by == "finish", r.ranking_note);
      std::cout << fmt::format("would race shapes {}: each submitted with sbatch; the first to start trains\n",
                               join(group.labels(), ", "));
      return;
    case RaceSubmission::Kind::Submitted:
      break;
  }
  std::cout << fmt::format("submitted race of {} as run {}: the first to start trains, the others are cancelled\n",
                           join(r.submitted, ", "), r.run.id);
  std::cout << fmt::format("  status: ddpctl status {}\n  logs:   ddpctl logs {}\n", r.run.id, r.run.id);
  if (wait || follow) wait_for_race(ctx, r.run, follow, out);
}

void setup_race(CLI::App& app, Context& ctx) {
  struct Options {
    RaceRequest req;
    std::string runs, templates;
    bool no_preflight = false, plan = false, wait = false, follow = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "race", "Submit several shapes (specs, or one spec's alternatives) as one group; the first to start trains");
  cmd->add_option("specs", o->req.specs, "Run specs (YAML); every shape of each joins the race")->required();
  cmd->add_option("--set", o->req.sets, "Override a field in every spec: KEY=VALUE with a dotted KEY");
  cmd->add_option("--runs", o->runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  cmd->add_option("--templates", o->templates, "Folder with template parts to use instead of the bundled ones");
  cmd->add_flag("--plan", o->plan,
                "Print the shapes ranked by predicted finish (estimated start + run time from earlier runs; "
                "--rank-by start: by start only); submit nothing");
  add_rank_by_options(cmd, o->req.rank_by);
  cmd->add_flag("--wait", o->wait, "Show progress until a shape wins");
  cmd->add_flag("--follow", o->follow, "Follow the winner until it ends (implies --wait)");
  cmd->add_flag("--dry-run", o->req.dry_run, "Validate and preflight only; submit nothing");
  cmd->add_flag("--no-preflight", o->no_preflight, "Skip the checks against sinfo and sacctmgr, and the program lookup");
  cmd->add_flag("--no-snapshot{false}", o->req.snapshot,
                "Run the submit folder's files as they are when a job starts, not a copy taken now");
  cmd->add_flag("--again", o->req.again, "Submit even if a job of this same race is still queued or running");
  cmd->callback([o, &ctx] {
    o->req.runs_root = runs_root(o->runs);
    o->req.templates_dir = templates_dir(o->templates);
    o->req.preflight = !o->no_preflight;
    race_command(o->req, o->plan, o->wait, o->follow, ctx);
  });
}

}  // namespace ddpctl::cli
