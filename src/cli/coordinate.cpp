// ddpctl coordinate RUN: the coordinator of a race across sites (docs/race.md
// "Across sites"); `submit` starts it, and this runs it again where the last
// one stopped.
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "base/files.hpp"
#include "base/version.hpp"
#include "cli/app.hpp"
#include "cli/common.hpp"
#include "sites/site_caller.hpp"

namespace ddpctl::cli {

void setup_coordinate(CLI::App& app, Context& ctx) {
  struct Options {
    std::string run, runs;
    double poll_s = 5, for_s = 0;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "coordinate", "Coordinate a race across sites: grant the first job to start, stand the other sites down");
  cmd->add_option("run", o->run, "The race's run id (as `submit` said it)")->required();
  cmd->add_option("--runs", o->runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  cmd->add_option("--poll", o->poll_s, "Seconds between polls of the sites")->check(CLI::Range(0.2, 600.0));
  cmd->add_option("--for", o->for_s, "Stop after this many seconds even if the race goes on")
      ->check(CLI::Range(0.0, 1e7));
  cmd->callback([o, &ctx] {
    CoordinateRequest req;
    req.runs_root = runs_root(o->runs);
    req.id = o->run;
    req.poll_s = o->poll_s;
    req.max_s = o->for_s;
    const std::string record = req.runs_root + "/" + req.id + "/sites.json";
    if (!std::filesystem::exists(record))
      throw UserError(Location{record}, "", fmt::format("no race across sites {} here ({} is not there)", req.id, record));
    SshSiteCaller sites(race_remote_base(req.runs_root + "/" + req.id, ctx.env), ctx.runner);
    int code = coordinate(req, sites, ctx.clock, std::cout);
    // A call to a site still in flight (one that hangs) is not waited for:
    // this process ends now, and its ssh with it (process.hpp).
    std::cout.flush();
    std::cerr.flush();
    std::_Exit(code);
  });
}

}  // namespace ddpctl::cli
