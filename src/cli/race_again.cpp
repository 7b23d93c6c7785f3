// ddpctl race-again RUN [--requeuing JOB [--leave-out NODES] [--slow-of BASE]]: opens the next generation of a
// race group whose winner was requeued and submits the other shapes into it
// (docs/race.md). The requeuing job's script runs it; status and logs do the
// same on the login node for requeues the job could not act on.
#include <algorithm>
#include <fmt/format.h>
#include <iostream>
#include <memory>

#include "cli/app.hpp"
#include "cli/common.hpp"
#include "agent/job_agent.hpp"
#include "runs/slow_record.hpp"
#include "base/text.hpp"
#include "race/race_again.hpp"

namespace ddpctl::cli {

void setup_race_again(CLI::App& app, Context& ctx) {
  struct Options {
    std::string run, runs, requeuing, because, leave_out, slow_of;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "race-again", "Race a group again after its winner was requeued: submit the other shapes into a new generation");
  cmd->add_option("run", o->run, "Run (name, id or path)")->required();
  cmd->add_option("--runs", o->runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  cmd->add_option("--requeuing", o->requeuing,
                  "The winner's job id, requeueing itself now (what its script passes); without it, Slurm is asked "
                  "whether the winner was requeued");
  cmd->add_option("--because", o->because,
                  "With --requeuing: why it requeues itself, as its script says (default: its time limit)");
  // The requeuing job races again before it is requeued, so before Slurm
  // shows the nodes it will leave out: its script names them.
  cmd->add_option("--leave-out", o->leave_out,
                  "With --requeuing: nodes its requeue leaves out, comma-separated; the shapes raced again leave them "
                  "out too (without --requeuing, Slurm's ExcNodeList of the requeued winner says)");
  cmd->add_option("--slow-of", o->slow_of,
                  "With --requeuing: a log base; also leave out the nodes its slow ranks' record names "
                  "(watchdog.exclude_slow)");
  cmd->callback([o, &ctx] {
    Run run = find_run(runs_root(o->runs), o->run);
    ConsoleOutput out;
    std::vector<std::string> leave_out;
    for (const auto& n : split(o->leave_out, ','))
      if (!n.empty()) leave_out.push_back(n);
    if (!o->slow_of.empty()) {
      std::string why_slow;
      for (const auto& n : recorded_slow_nodes(o->slow_of, job_place(ctx.env).attempt, &why_slow))
        if (std::find(leave_out.begin(), leave_out.end(), n) == leave_out.end()) leave_out.push_back(n);
    }
    RaceAgain r = race_again(run, o->requeuing, ctx, out, leave_out, o->because);
    if (!r.opened) {
      std::cout << fmt::format("run {}: not racing again: {}\n", run.id, r.why_not);
      return;
    }
    std::cout << fmt::format("run {}: generation {} races {}\n", run.id, r.generation,
                             r.submitted.empty() ? std::string("only the requeued winner") : join(r.submitted, ", "));
  });
}

}  // namespace ddpctl::cli
