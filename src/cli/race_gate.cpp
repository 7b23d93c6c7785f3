// ddpctl race-gate COORDINATOR [--grant JOB] [--stand-down WHO] [--round N]
// [--open-round N --because WHY [--resubmit]]: one site's
// side of a race across sites, asked by the coordinator in one ssh call per
// poll (docs/race.md "Across sites"); prints JSON.
#include <iostream>
#include <memory>

#include "cli/app.hpp"
#include "cli/common.hpp"
#include "race/race_gate.hpp"

namespace ddpctl::cli {

void setup_race_gate(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<RaceGateRequest>();
  auto runs = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "race-gate", "One site's side of a race across sites: grant, stand down, and say the gate's state (JSON)");
  cmd->group("");  // the coordinator's own use
  cmd->add_option("coordinator", o->coordinator, "The race's run on the machine that submitted")->required();
  cmd->add_option("--runs", *runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  cmd->add_option("--site", o->site, "The site (its host as the spec names it) whose run is asked for");
  cmd->add_option("--grant", o->grant, "This job trains: the gate's one grant names it");
  cmd->add_option("--stand-down", o->stand_down, "Another site won (\"SITE JOB TIME\"): every job here stands down");
  cmd->add_option("--round", o->round, "The race's round --grant and --stand-down are for (default: the newest here)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--open-round", o->open_round, "The race runs again: round N opens here")->check(CLI::Range(2, 1000));
  cmd->add_option("--because", o->because, "Why the race runs again (the requeued winner), for the records");
  cmd->add_flag("--resubmit", o->resubmit, "This site stood down: submit its shapes again into the new round");
  cmd->add_option("--events-after", o->events_after, "Carry the run's events after this seq (the coordinator's relay)")
      ->check(CLI::NonNegativeNumber);
  cmd->callback([o, runs, &ctx] {
    o->runs_root = runs_root(*runs);
    std::cout << race_gate(*o, ctx).dump() << '\n';
  });
}

}  // namespace ddpctl::cli
