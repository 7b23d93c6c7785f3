// ddpctl sweep SPEC: one run per entry of the spec's `sweep:` list, as one
// experiment (src/sweep/sweep.hpp).
#include <fmt/format.h>
#include <iostream>
#include <memory>

#include "cli/app.hpp"
#include "cli/common.hpp"
#include "base/paths.hpp"
#include "spec/spec.hpp"
#include "sites/sites_submit.hpp"
#include "sweep/sweep.hpp"
#include "sweep/grid_continuation.hpp"
#include "sweep/sweep_retry.hpp"

namespace ddpctl::cli {

namespace {

struct SweepOptions {
  SweepRequest req;
  std::string runs, templates;
  bool no_preflight = false;
  RemoteOptions remote;
};

// A grid whose spec names its sites (`on:`): its first cell raced across
// them, the rest on the winning site and shape (docs/race.md "Across
// sites"); false for any other spec.
bool sweep_across_sites_if_named(const SweepOptions& o, Context& ctx) {
  RunSpec spec = load_run_spec(o.req.spec, o.req.sets);
  if (!spec.names_sites || !spec.has_grid) return false;
  for (const auto& [given, option] : {std::pair{o.req.dry_run, "--dry-run"}, {!o.req.only.empty(), "--only"},
                                      {o.req.one_at_a_time, "--one-at-a-time"}, {!o.req.name.empty(), "--name"}})
    if (given)
      throw UserError(Location{option}, "", "is not taken by a grid raced across sites (`ddpctl gen SPEC --site "
                                            "HOST` shows a site's scripts)");
  SitesSubmitRequest r;
  r.verb = "sweep";
  r.spec = o.req.spec;
  r.sets = o.req.sets;
  r.runs_root = runs_root(o.runs);
  r.snapshot = o.req.snapshot;
  r.again = o.req.again;
  r.gate_s = o.req.across.gate_s;
  r.preflight = !o.no_preflight;
  r.self = executable_dir() + "/ddpctl";
  ConsoleOutput out;
  submit_across_sites(r, ctx, out);
  return true;
}

}  // namespace

void setup_sweep(CLI::App& app, Context& ctx) {
  using Options = SweepOptions;
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "sweep", "Submit a spec's grid of cells as job arrays (one per shape), or each shape of its `sweep:` list");
  cmd->add_option("spec", o->req.spec, "Run spec (YAML) with a `grid:`, or a `sweep:` list");
  cmd->add_option("--set", o->req.sets, "Override a spec field: KEY=VALUE with a dotted KEY");
  cmd->add_option("--name", o->req.name, "Experiment name (default: the spec's name)");
  cmd->add_option("--only", o->req.only, "Only these shapes (labels)")->delimiter(',');
  cmd->add_option("--runs", o->runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  cmd->add_option("--templates", o->templates, "Folder with template parts to use instead of the bundled ones");
  cmd->add_flag("--one-at-a-time", o->req.one_at_a_time,
                "Each run waits for the previous one to end (Slurm dependency afterany), so runs do not compete");
  cmd->add_flag("--dry-run", o->req.dry_run, "Validate and preflight only; submit nothing");
  cmd->add_flag("--no-preflight", o->no_preflight, "Skip the checks against sinfo and sacctmgr, and the program lookup");
  cmd->add_flag("--no-snapshot{false}", o->req.snapshot,
                "Run the submit folder's files as they are when a job starts, not a copy taken now");
  cmd->add_flag("--again", o->req.again, "Submit even shapes whose earlier run is still queued or running");
  add_remote_submit_options(cmd, o->remote, o->req.snapshot_from);
  add_site_options(cmd, o->req.across);
  struct RetryOptions {
    RetryRequest req;
    std::string runs;
    RemoteOptions remote;
  };
  auto r = std::make_shared<RetryOptions>();
  CLI::App* retry = cmd->add_subcommand(
      "retry", "Submit again the cells of a grid's sweep that failed, were cancelled or timed out, as one array");
  retry->add_option("sweep", r->req.sweep, "The sweep (run id, name or prefix)")->required();
  retry->add_option("--cells", r->req.cells,
                    "Only these cells, by name (lr=0.1,seed=2); separate several with ; (a cell's whole name is "
                    "that cell, ; and all); repeatable");
  retry->add_option("--runs", r->runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  retry->add_flag("--dry-run", r->req.dry_run, "Say which cells would be submitted; submit nothing");
  retry->add_flag("--no-preflight{false}", r->req.preflight, "Skip the check of the cells against your submit limits");
  add_remote_options(retry, r->remote);
  retry->callback([r, &ctx] {
    run_on_remote_if_asked(r->remote, ctx);
    r->req.runs_root = runs_root(r->runs);
    ConsoleOutput out;
    retry_grid_cells(r->req, ctx, out);
  });
  struct ContinueOptions {
    std::string sweep, runs;
  };
  auto c = std::make_shared<ContinueOptions>();
  CLI::App* cont = cmd->add_subcommand(
      "continue", "Submit a raced grid's other cells on the shape that won its first cell's race (the winning job "
                  "does this itself; `ddpctl status` says when it could not)");
  cont->add_option("sweep", c->sweep, "The sweep (run id, name, prefix or folder)")->required();
  cont->add_option("--runs", c->runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  cont->callback([c, &ctx] {
    Run run = find_run(runs_root(c->runs), c->sweep);
    ConsoleOutput out;
    GridContinuation cont_result = continue_raced_grid(run, ctx, out);
    if (!cont_result.submitted && !cont_result.why_not.empty()) std::cout << fmt::format("sweep {}: nothing submitted: {}\n", run.id, cont_result.why_not);
  });
  cmd->callback([o, cmd, retry, cont, &ctx] {
    if (cmd->got_subcommand(retry) || cmd->got_subcommand(cont)) return;
    if (o->req.spec.empty()) throw CLI::RequiredError("spec");
    // With --on, the ddpctl there reads the spec (and races its sites from there).
    if (o->req.across.site.empty() && !remote_asked(o->remote) && sweep_across_sites_if_named(*o, ctx)) return;
    if (o->req.across.on() && o->req.across.coordinator.empty())
      throw UserError(Location{"--site"}, "", "is ddpctl's own, with --coordinator: one site of a race across sites");
    submit_on_remote_if_asked(o->remote, {{o->req.spec}, o->req.sets, o->runs, o->req.snapshot, o->req.dry_run}, ctx);
    o->req.runs_root = runs_root(o->runs);
    o->req.templates_dir = templates_dir(o->templates);
    o->req.preflight = !o->no_preflight;
    ConsoleOutput out;
    run_sweep(o->req, ctx, out);
  });
}

}  // namespace ddpctl::cli
