// ddpctl fetch RUN... --on HOST: copies runs' records, metrics and plots
// from the login host's runs folder into this folder's (src/remote/remote_fetch.hpp).
#include <iostream>
#include <memory>

#include "cli/app.hpp"
#include "cli/common.hpp"
#include "remote/remote_fetch.hpp"
#include "script/runs.hpp"

namespace ddpctl::cli {

void setup_fetch(CLI::App& app, Context& ctx) {
  struct Options {
    std::vector<std::string> targets;
    std::string runs;
    RemoteOptions remote;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "fetch", "Copy runs' records, metrics and plots from the login host (--on HOST) into this folder's runs/");
  cmd->add_option("runs", o->targets, "Runs (id, name or prefix: its newest run)")->required();
  cmd->add_option("--runs", o->runs, "Folder of run records, there and here (default: runs)");
  add_remote_options(cmd, o->remote);
  cmd->callback([o, &ctx] {
    if (!remote_asked(o->remote))
      throw UserError(Location{"--on"}, "", "fetch brings runs from a login host: name it with --on HOST");
    FetchRequest f;
    f.target = remote_target(o->remote, ctx);
    f.targets = o->targets;
    f.runs_option = o->runs;
    f.local_runs_root = runs_root(o->runs);
    fetch_runs(f, ctx.runner, std::cout);
  });
}

}  // namespace ddpctl::cli
