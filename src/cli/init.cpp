// ddpctl init --cluster NAME [--nodes N] [--gpus N] ... [-- COMMAND...]: a
// commented starter run spec, valid as written, never over an existing file.
#include <ctime>
#include <iostream>
#include <memory>

#include "cli/app.hpp"
#include "cli/json_output.hpp"
#include "assist/init.hpp"

namespace ddpctl::cli {

void setup_init(CLI::App& app, Context&) {
  auto o = std::make_shared<InitRequest>();
  auto gpus = std::make_shared<int>(-1);
  CLI::App* cmd = app.add_subcommand("init", "Write a commented starter run spec for a cluster and a shape");
  cmd->add_option("--cluster", o->cluster, "Cluster profile: a name (ddpctl's, the site's, yours) or a path")->required();
  cmd->add_option("--nodes", o->nodes, "Nodes (1)");
  cmd->add_option("--gpus", *gpus, "GPUs per node (default: what the partition holds; 0: a CPU run)");
  cmd->add_option("--gpu-type", o->gpu_type, "A GPU type of the profile");
  cmd->add_option("--partition", o->partition, "A partition of the profile");
  cmd->add_option("--time", o->time, "Time limit (HH:MM:SS, D-HH:MM:SS)");
  cmd->add_option("--account", o->account, "Slurm account to charge");
  cmd->add_option("--name", o->name, "The run's name (default: the file's name)");
  cmd->add_option("-o,--output", o->output, "The spec to write (default: NAME.yaml, train.yaml); never replaced");
  cmd->add_option("command", o->command, "Your program and its arguments, after --; default: the bundled trainer");
  cmd->callback([o, gpus] {
    if (*gpus >= 0) o->gpus = *gpus;
    char today[16];
    std::time_t now = std::time(nullptr);
    std::strftime(today, sizeof today, "%Y-%m-%d", std::localtime(&now));
    std::string written = write_starter_spec(*o, today);
    json_fact("file", written);
    std::cout << "wrote " << written << ": check it with `ddpctl gen " << written
              << " --stdout`, then `ddpctl submit " << written << "`\n";
  });
}

}  // namespace ddpctl::cli
