#pragma once
// A container runtime's own errors in a job's logs, in words: Apptainer and
// Singularity ("FATAL: ..."), Podman ("Error: ..."), Charliecloud
// ("ch-run[N]: error: ..."), Pyxis and enroot (in srun's and slurmstepd's
// lines), and the job script's own check that the runtime is on the node.
#include <optional>
#include <string>
#include <vector>

namespace ddpctl {

// A container runtime's own failure in a log's lines: what happened in words
// ("could not find the image /x.sif") and the runtime's line; nullopt when
// the lines show none.
struct ContainerFailure {
  std::string what;
  std::string line;
};
std::optional<ContainerFailure> find_container_failure(const std::vector<std::string>& lines);

}  // namespace ddpctl
