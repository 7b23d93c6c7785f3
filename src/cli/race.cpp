// ddpctl race SPEC...: every shape of the specs as one race group; the first
// to start trains (docs/race.md). `submit` of a spec with alternatives too.
#include <fmt/format.h>
#include <iostream>
#include <memory>

#include "cli/app.hpp"
#include "cli/common.hpp"
#include "race/race_command.hpp"

namespace ddpctl::cli {

void race_command(const RaceRequest& req, bool plan, bool wait, bool follow, Context& ctx) {
  ConsoleOutput out;
  SideOutput side;
  note_lock_wait(ddpctl::race_command(req, plan, wait, follow, ctx, out, side));
}

void setup_race(CLI::App& app, Context& ctx) {
  struct Options {
    RaceRequest req;
    std::string runs, templates;
    bool no_preflight = false, plan = false, wait = false, follow = false;
    RemoteOptions remote;
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
  add_remote_submit_options(cmd, o->remote, o->req.snapshot_from);
  cmd->callback([o, &ctx] {
    submit_on_remote_if_asked(o->remote, {o->req.specs, o->req.sets, o->runs, o->req.snapshot, o->req.dry_run || o->plan},
                              ctx);
    o->req.runs_root = runs_root(o->runs);
    o->req.templates_dir = templates_dir(o->templates);
    o->req.preflight = !o->no_preflight;
    race_command(o->req, o->plan, o->wait, o->follow, ctx);
  });
}

}  // namespace ddpctl::cli
