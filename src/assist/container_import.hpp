#pragma once
// `ddpctl container import SPEC`: the spec's registry image imported once
// into a file the nodes read (enroot import for Pyxis, apptainer pull;
// docs/containers.md).
#include <ostream>
#include <string>
#include <vector>

#include "slurm/context.hpp"

namespace ddpctl {

struct ContainerImport {
  std::string image;   // as the spec wrote it
  std::string output;  // the file written (absolute)
  std::vector<std::string> argv;
};

// What would be run, and into which file (`output`, else FOLDER/<image
// name>.sqsh or .sif). A UserError for a spec without a registry image, a
// runtime without an import step, or a file that exists already.
ContainerImport plan_container_import(const std::string& spec, const std::vector<std::string>& sets,
                                      const std::string& output, const std::string& folder);

// Runs it (minutes for a large image), saying so on `err`; the command's
// output is passed on (its stdout to `out`, its stderr to `err`). A
// UserError when it fails.
void run_container_import(const ContainerImport& import, int timeout_min, Context& ctx, std::ostream& out,
                          std::ostream& err);

}  // namespace ddpctl
