// ddpctl race-checkpoint COORDINATOR --send|--receive: a re-race across
// sites carries the run's checkpoint from the site that trained last to the
// one that won (workflows/race_checkpoint.hpp); the coordinator's own use.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <unistd.h>

#include "base/diagnostics.hpp"
#include "cli/app.hpp"
#include "cli/common.hpp"
#include "script/runs.hpp"
#include "workflows/race_checkpoint.hpp"
#include "workflows/race_gate.hpp"

namespace ddpctl::cli {

void setup_race_checkpoint(CLI::App& app, Context&) {
  struct Options {
    std::string coordinator, runs;
    bool send = false, receive = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("race-checkpoint",
                                     "A re-race across sites: this site's run's checkpoint as a tar on stdout "
                                     "(--send), or one on stdin taken as it (--receive)");
  cmd->group("");  // the coordinator's own use
  cmd->add_option("coordinator", o->coordinator, "The race's run on the machine that submitted")->required();
  cmd->add_option("--runs", o->runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  auto* send = cmd->add_flag("--send", o->send, "Write the checkpoint folder as a tar on stdout");
  cmd->add_flag("--receive", o->receive, "Take the tar on stdin as the checkpoint folder")->excludes(send);
  cmd->callback([o] {
    const std::string root = runs_root(o->runs);
    std::optional<Run> run = race_site_run(root, o->coordinator);
    if (!run) throw UserError(Location{root}, "", "no run here is a site of race " + o->coordinator);
    if (o->send) {
      std::vector<std::string> argv = checkpoint_send_argv(run_checkpoint_folder(*run));
      std::vector<char*> args;
      for (auto& a : argv) args.push_back(a.data());
      args.push_back(nullptr);
      std::cout.flush();
      ::execvp(args[0], args.data());
      throw UserError(Location{run->dir}, "", std::string("cannot run tar: ") + std::strerror(errno));
    }
    if (!o->receive) throw UserError(Location{"race-checkpoint"}, "", "needs --send or --receive");
    const std::string tar = run->dir + "/race/checkpoint.incoming.tar";
    {
      std::ofstream out(tar, std::ios::binary | std::ios::trunc);
      out << std::cin.rdbuf();
      if (!out) throw UserError(Location{tar}, "", "cannot write the checkpoint that came");
    }
    nlohmann::json said = receive_checkpoint(*run, tar);
    std::error_code ec;
    std::filesystem::remove(tar, ec);
    std::cout << said.dump() << '\n';
  });
}

}  // namespace ddpctl::cli
