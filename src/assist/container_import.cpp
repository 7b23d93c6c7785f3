#include "assist/container_import.hpp"

#include <filesystem>
#include <fmt/format.h>

#include "script/container.hpp"
#include "script/resolve.hpp"
#include "base/shell.hpp"

namespace ddpctl {

ContainerImport plan_container_import(const std::string& spec, const std::vector<std::string>& sets,
                                      const std::string& output, const std::string& folder) {
  ResolvedRun run = load_and_resolve(spec, sets);
  if (!run.container) throw UserError(run.spec.where_of("container"), "container", "this spec runs in no container");
  const ResolvedContainer& c = *run.container;
  if (c.image_is_path)
    throw UserError(c.where, c.field, fmt::format("{} is a file already: there is nothing to import", c.image));
  ContainerImport i;
  i.image = c.image_written;
  std::string file = output.empty() ? default_import_path(c, folder) : output;
  i.argv = import_command(c, file);
  if (i.argv.empty())
    throw UserError(c.runtime_where, "container.runtime",
                    fmt::format("{} has no import step ddpctl knows; pull the image with the runtime's own tools",
                                runtime_name(c.runtime)));
  if (std::filesystem::exists(file)) throw UserError(Location{file}, "", "exists already; remove it or choose another --output");
  i.output = std::filesystem::absolute(file).lexically_normal().string();
  return i;
}

void run_container_import(const ContainerImport& import, int timeout_min, Context& ctx, std::ostream& out,
                          std::ostream& err) {
  err << "ddpctl: importing: " << shell_join(import.argv) << " (minutes for a large image)\n";
  CommandResult r = ctx.runner.run(import.argv, std::chrono::minutes(timeout_min));
  err << r.err;
  out << r.out;
  if (!r.ok()) throw UserError(Location{import.argv[0]}, "", "the import failed: " + r.describe());
}

}  // namespace ddpctl
