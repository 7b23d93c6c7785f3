// ddpctl container import SPEC: a registry image imported once into a file on
// the shared file system (enroot import for Pyxis, apptainer pull), so that
// the nodes of a multi-node job do not each import it at start.
#include <fmt/format.h>
#include <iostream>
#include <memory>

#include "cli/app.hpp"
#include "cli/common.hpp"
#include "assist/container_import.hpp"

namespace ddpctl::cli {

void setup_container(CLI::App& app, Context& ctx) {
  CLI::App* cmd = app.add_subcommand("container", "Container images of a run spec (docs/containers.md)");
  cmd->require_subcommand(1);
  struct Options {
    std::string spec, output, folder = ".";
    std::vector<std::string> sets;
    int timeout_min = 120;
  };
  auto o = std::make_shared<Options>();
  CLI::App* imp = cmd->add_subcommand(
      "import", "Import the spec's registry image once into a file (enroot import for Pyxis, apptainer pull)");
  imp->add_option("spec", o->spec, "Run spec (YAML)")->required();
  imp->add_option("--set", o->sets, "Override a spec field: KEY=VALUE with a dotted KEY");
  imp->add_option("-o,--output", o->output, "The file to write (default: FOLDER/<image name>.sqsh or .sif)");
  imp->add_option("--folder", o->folder, "Where the default file name goes (a shared file system the nodes see)");
  imp->add_option("--timeout-min", o->timeout_min, "Give up after this many minutes (120)");
  imp->callback([o, &ctx] {
    ContainerImport i = plan_container_import(o->spec, o->sets, o->output, o->folder);
    run_container_import(i, o->timeout_min, ctx, std::cout, std::cerr);
    std::cout << fmt::format("imported {} to {}\nset it in the spec: container: {{image: {}}}\n", i.image, i.output, i.output);
  });
}

}  // namespace ddpctl::cli
