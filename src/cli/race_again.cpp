// ddpctl race-again RUN [--requeuing JOB]: opens the next generation of a
// race group whose winner was requeued and submits the other shapes into it
// (docs/race.md). The requeuing job's script runs it; status and logs do the
// same on the login node for requeues the job could not act on.
#include <fmt/format.h>
#include <iostream>
#include <memory>

#include "app.hpp"
#include "common.hpp"
#include "text.hpp"

namespace ddpctl::cli {

void setup_race_again(CLI::App& app, Context& ctx) {
  struct Options {
    std::string run, runs, requeuing;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "race-again", "Race a group again after its winner was requeued: submit the other shapes into a new generation");
  cmd->add_option("run", o->run, "Run (name, id or path)")->required();
  cmd->add_option("--runs", o->runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  cmd->add_option("--requeuing", o->requeuing,
                  "The winner's job id, requeueing itself now (what its script passes); without it, Slurm is asked "
                  "whether the winner was requeued");
  cmd->callback([o, &ctx] {
    Run run = find_run(runs_root(o->runs), o->run);
    ConsoleOutput out;
    RaceAgain r = race_again(run, o->requeuing, ctx, out);
    if (!r.opened) {
      std::cout << fmt::format("run {}: not racing again: {}\n", run.id, r.why_not);
      return;
    }
    std::cout << fmt::format("run {}: generation {} races {}\n", run.id, r.generation,
                             r.submitted.empty() ? std::string("only the requeued winner") : join(r.submitted, ", "));
  });
}

}  // namespace ddpctl::cli
