// ddpctl cancel RUN|JOBID...: scancel, then confirm what Slurm did (src/workflows/cancel.hpp).
#include <memory>

#include "cli/app.hpp"
#include "workflows/cancel.hpp"
#include "cli/common.hpp"

namespace ddpctl::cli {

void setup_cancel(CLI::App& app, Context& ctx) {
  struct Options {
    CancelRequest req;
    std::string runs;
    RemoteOptions remote;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("cancel", "Cancel the jobs of runs (or job ids) and confirm they ended");
  cmd->add_option("targets", o->req.targets, "Runs (name, id or path) or job ids")->required();
  cmd->add_option("--cell", o->req.cells, "A grid's sweep: only this cell (by name, e.g. lr=0.1,seed=2); repeatable");
  cmd->add_option("--runs", o->runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  add_remote_options(cmd, o->remote);
  cmd->callback([o, &ctx] {
    run_on_remote_if_asked(o->remote, ctx);
    o->req.runs_root = runs_root(o->runs);
    ConsoleOutput out;
    cancel_jobs(o->req, ctx, out);
  });
}

}  // namespace ddpctl::cli
