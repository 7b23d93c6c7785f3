// ddpctl container import SPEC: a registry image imported once into a file on
// the shared file system (enroot import for Pyxis, apptainer pull), so that
// the nodes of a multi-node job do not each import it at start.
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <memory>

#include "app.hpp"
#include "common.hpp"
#include "container.hpp"
#include "resolve.hpp"
#include "shell.hpp"

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
    ResolvedRun run = load_and_resolve(o->spec, o->sets);
    if (!run.container)
      throw UserError(run.spec.where_of("container"), "container", "this spec runs in no container");
    const ResolvedContainer& c = *run.container;
    if (c.image_is_path)
      throw UserError(c.where, c.field, fmt::format("{} is a file already: there is nothing to import", c.image));
    std::string output = o->output.empty() ? default_import_path(c, o->folder) : o->output;
    std::vector<std::string> argv = import_command(c, output);
    if (argv.empty())
      throw UserError(c.runtime_where, "container.runtime",
                      fmt::format("{} has no import step ddpctl knows; pull the image with the runtime's own tools",
                                  runtime_name(c.runtime)));
    if (std::filesystem::exists(output))
      throw UserError(Location{output}, "", "exists already; remove it or choose another --output");
    std::cerr << "ddpctl: importing: " << shell_join(argv) << " (minutes for a large image)\n";
    CommandResult r = ctx.runner.run(argv, std::chrono::minutes(o->timeout_min));
    std::cerr << r.err;
    std::cout << r.out;
    if (!r.ok()) throw UserError(Location{argv[0]}, "", "the import failed: " + r.describe());
    std::string abs = std::filesystem::absolute(output).lexically_normal().string();
    std::cout << fmt::format("imported {} to {}\nset it in the spec: container: {{image: {}}}\n", c.image_written, abs, abs);
  });
}

}  // namespace ddpctl::cli
