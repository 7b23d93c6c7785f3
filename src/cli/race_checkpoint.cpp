// ddpctl race-checkpoint COORDINATOR --site HOST --send|--receive: a re-race
// across sites carries the run's checkpoint from the site that trained last
// to the one that won (race/race_checkpoint.hpp); the coordinator's own use.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <unistd.h>

#include "base/diagnostics.hpp"
#include "base/sized_stream.hpp"
#include "cli/app.hpp"
#include "cli/common.hpp"
#include "runs/run_store.hpp"
#include "race/race_checkpoint.hpp"
#include "race/race_gate.hpp"

namespace ddpctl::cli {

namespace {

// The stream's file, removed however --receive ends.
struct IncomingTar {
  std::string path;
  ~IncomingTar() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
};

}  // namespace

void setup_race_checkpoint(CLI::App& app, Context&) {
  struct Options {
    std::string coordinator, runs, site;
    bool send = false, receive = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("race-checkpoint",
                                     "A re-race across sites: this site's run's checkpoint as its size and a tar on "
                                     "stdout (--send), or one on stdin taken as it (--receive)");
  cmd->group("");  // the coordinator's own use
  cmd->add_option("coordinator", o->coordinator, "The race's run on the machine that submitted")->required();
  cmd->add_option("--runs", o->runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  cmd->add_option("--site", o->site, "The site (its host as the spec names it) whose run it is");
  auto* send = cmd->add_flag("--send", o->send, "Write the checkpoint folder's size and a tar of it on stdout");
  cmd->add_flag("--receive", o->receive, "Take the size and tar on stdin as the checkpoint folder")->excludes(send);
  cmd->callback([o] {
    const std::string root = runs_root(o->runs);
    if (!o->send && !o->receive) throw UserError(Location{"race-checkpoint"}, "", "needs --send or --receive");
    std::optional<Run> run = race_site_run(root, o->coordinator, o->site);
    if (!run) throw UserError(Location{root}, "", "no run here is a site of race " + o->coordinator);
    if (o->send) {
      const std::string folder = run_checkpoint_folder(*run);
      std::cout << size_line(kCheckpointSizeWord, checkpoint_tar_bound(folder));
      std::vector<std::string> argv = checkpoint_send_argv(folder);
      std::vector<char*> args;
      for (auto& a : argv) args.push_back(a.data());
      args.push_back(nullptr);
      std::cout.flush();
      ::execvp(args[0], args.data());
      throw UserError(Location{run->dir}, "", std::string("cannot run tar: ") + std::strerror(errno));
    }
    IncomingTar tar{run->dir + "/race/checkpoint.incoming.tar"};
    read_checkpoint_stream(std::cin, tar.path);
    std::cout << receive_checkpoint(*run, tar.path).dump() << '\n';
  });
}

}  // namespace ddpctl::cli
