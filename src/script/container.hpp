#pragma once
// Running the launcher and the ranks in a container (docs/containers.md):
// the spec's `container:` over the profile's, the image in the form its
// runtime takes, and the checks before the queue. The words the job script
// runs it with are container_script.hpp's; the runtime's own errors in a
// job's logs, container_failure.hpp's.
//
// The batch shell stays outside (race claim, requeue, node check, the job
// agent); only the training step's program runs inside: Apptainer,
// Singularity, Podman and Charliecloud wrap it in the step's task, Pyxis
// starts the whole task in the image (srun --container-image).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "spec/cluster_profile.hpp"
#include "base/diagnostics.hpp"
#include "spec/run_spec.hpp"

namespace ddpctl {

struct ResolvedContainer {
  ContainerRuntime runtime = ContainerRuntime::Apptainer;
  std::string program;          // the runtime's command: apptainer, podman, ch-run ("" for Pyxis: srun's plugin)
  std::string image;            // in the runtime's form (a path made absolute, or a reference)
  std::string image_written;    // as the spec or profile wrote it
  bool image_is_path = false;   // a file or folder (else a registry reference)
  std::vector<std::string> mounts;  // the profile's, then the spec's: SRC[:DST[:ro]]
  std::string workdir;          // "": the submit folder
  EnvList env;                  // set inside only
  std::vector<std::string> options;
  Location where;               // where the image was named
  std::string field;            // its field: container.image, container.image.pyxis
  Location runtime_where;
  bool program_named = false;   // the profile names the program: the nodes' path, not checked here
};

// The container of a run: none when neither the spec nor the profile names
// an image, or the spec says `container: false`. Problems (no runtime, an
// image this runtime cannot run) go to `diags` at the spec's line.
std::optional<ResolvedContainer> resolve_container(const RunSpec& spec, const ClusterProfile& profile,
                                                   Diagnostics& diags);

// Where a folder the job uses is, for a bind: "" when it is under the submit
// folder (bound already), else its absolute path.
std::string outside_submit_folder(const std::string& path);

// Before the queue: the runtime is here (or named by the profile), an image
// path exists and is readable, mounts' sources exist; `nodes` > 1 with a
// registry image warns (every node imports it at start) into `warnings`.
// `path_changes`: modules or setup lines may put the runtime on the nodes' PATH
// (then only the job can tell, and says so: "ddpctl: container: ...").
void check_container(const ResolvedContainer& c, int max_nodes, bool path_changes, Diagnostics& diags,
                     std::vector<std::string>& warnings);

// The command that imports a registry image once into a file on the shared
// file system (`ddpctl container import`): enroot import (Pyxis), apptainer
// pull; empty when the runtime has no such step.
std::vector<std::string> import_command(const ResolvedContainer& c, const std::string& output);
// Where `import` puts it by default: <folder>/<name of the image>.sqsh|.sif.
std::string default_import_path(const ResolvedContainer& c, const std::string& folder);

}  // namespace ddpctl
