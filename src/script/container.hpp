#pragma once
// Running the launcher and the ranks in a container (docs/containers.md):
// the spec's `container:` over the profile's, the image in the form its
// runtime takes, the words the job script runs it with, the checks before
// the queue, and the runtime's own errors in a job's logs, in words.
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

// What the job script needs (render.cpp); `spec` for the folders to bind
// (output_dir, trainer data and checkpoints), `snapshot_dir` when there is one,
// `env_names` the variables ddpctl sets (they must reach the ranks).
// `snapshot_live`: the live folder of a snapshot whose view the job works in
// (snapshot.hpp's make_workdir): the view, the snapshot and that folder are
// bound, and relative mounts are the submit folder's.
struct ContainerScript {
  std::string words;        // the bash array's contents: `apptainer exec --nv ... IMAGE`, or Pyxis's srun options
  std::string mkdirs;       // folders made before the step (bind sources the program writes), shell words; may be empty
  std::string task_lines;   // lines of the step's task before `exec` (runtime check, environment forwarding)
  std::string batch_lines;  // lines the batch shell runs before the array (raw; may be empty)
  std::string step_env;     // Pyxis: NAME=value words before the step's srun (container.env)
  bool wraps = true;        // the words go before the command (else, Pyxis: into srun)
};
ContainerScript container_script(const ResolvedContainer& c, const RunSpec& spec, int gpus_per_node,
                                 const std::string& snapshot_dir, const std::vector<std::string>& env_names,
                                 const std::string& snapshot_live = "");

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

// A container runtime's own failure in a log's lines: what happened in words
// ("could not find the image /x.sif") and the runtime's line; nullopt when
// the lines show none.
struct ContainerFailure {
  std::string what;
  std::string line;
};
std::optional<ContainerFailure> find_container_failure(const std::vector<std::string>& lines);

}  // namespace ddpctl
