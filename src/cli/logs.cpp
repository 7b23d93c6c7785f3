// ddpctl logs RUN [-f] [--rank N] [--cell NAME]: the job's logs (a grid
// cell's), followed across requeues (src/logs/logs.hpp).
#include <iostream>
#include <memory>

#include "cli/app.hpp"
#include "cli/common.hpp"
#include "logs/logs.hpp"
#include "race/race_waiting.hpp"

namespace ddpctl::cli {

void setup_logs(CLI::App& app, Context& ctx) {
  struct Options {
    LogsRequest req;
    std::string runs;
    RemoteOptions remote;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("logs", "Show (or follow) a run's job logs");
  cmd->add_option("run", o->req.run, "Run (name, id or path), or a job id as status shows it")->required();
  cmd->add_option("--rank", o->req.rank,
                  "Show the training output of this global rank (default: a failed job's first failing rank, else 0)");
  cmd->add_option("--shape", o->req.shape, "The job of this shape (default: the latest job; a race's winner)");
  cmd->add_option("--cell", o->req.cell, "A grid's sweep: this cell's logs, by name (lr=0.1,seed=2)");
  cmd->add_option("--runs", o->runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  cmd->add_flag("-f,--follow", o->req.follow, "Keep printing as the job writes, across requeues, until it ends");
  add_remote_options(cmd, o->remote);
  cmd->callback([o, &ctx] {
    run_on_remote_if_asked(o->remote, ctx);
    // A race across sites: the winner's logs, at its site.
    run_at_winning_site(o->req.run, o->runs, "logs", ctx);
    o->req.runs_root = runs_root(o->runs);
    // Reading never submits: what waits on an act is said, with its command.
    for (const auto& n : waiting_act_notes(o->req.runs_root, {o->req.run}, ctx.clock.now(), ctx.slurm))
      std::cerr << "ddpctl: note: " << n << '\n';
    ConsoleOutput out;
    show_logs(o->req, ctx, out);
  });
}

}  // namespace ddpctl::cli
