#pragma once
// The words a job script runs its training step's program in a container
// with (docs/containers.md): each runtime's command line, the binds, the
// variables that must reach the ranks, the lines around the step.
#include <string>
#include <vector>

#include "script/container.hpp"
#include "spec/run_spec.hpp"

namespace ddpctl {

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

}  // namespace ddpctl
