// ddpctl sweep SPEC: one run per entry of the spec's `sweep:` list, as one
// experiment (src/sweep.hpp).
#include <memory>

#include "app.hpp"
#include "common.hpp"
#include "sweep.hpp"

namespace ddpctl::cli {

void setup_sweep(CLI::App& app, Context& ctx) {
  struct Options {
    SweepRequest req;
    std::string runs, templates;
    bool no_preflight = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("sweep", "Submit one run per shape of a spec's `sweep:` list, as an experiment");
  cmd->add_option("spec", o->req.spec, "Run spec (YAML) with a `sweep:` list")->required();
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
  cmd->callback([o, &ctx] {
    o->req.runs_root = runs_root(o->runs);
    o->req.templates_dir = templates_dir(o->templates);
    o->req.preflight = !o->no_preflight;
    ConsoleOutput out;
    run_sweep(o->req, ctx, out);
  });
}

}  // namespace ddpctl::cli
