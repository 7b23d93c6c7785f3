#pragma once
// An attempt's provenance gathered (docs/runs.md): the job agent on the
// job's first node, as the attempt starts (`ddpctl job environment`, in the
// background: it never delays training), asks the program's Python and
// torch (CUDA, NCCL), nvidia-smi, the modules and the variables ddpctl set,
// and writes the record (runs/provenance_record.hpp).
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.hpp"
#include "base/environment.hpp"
#include "base/process.hpp"
#include "runs/provenance_record.hpp"
#include "slurm/context.hpp"

namespace ddpctl {

struct ProvenanceOptions {
  std::vector<std::string> argv;       // the launch command
  std::vector<std::string> nodes;
  std::vector<std::string> env_names;  // the variables ddpctl set
  std::string cwd;                     // the job's working directory
  std::chrono::milliseconds python_timeout{30000};
  // The program runs in a container (docs/containers.md): its runtime and
  // image, and how many of argv's first words start it (apptainer exec ...
  // IMAGE); the probes run through those words. 0 with a runtime (Pyxis):
  // the container cannot be entered from here, so Python is not probed.
  std::string container, image;
  size_t container_words = 0;
};

// Collects the record. Commands (the program's Python, nvidia-smi) run
// through `runner`, each bounded; what fails becomes a note, never an error.
// The variables and PATH are `env`'s (the job's), the time `clock`'s.
Provenance collect_provenance(const ProvenanceOptions& o, CommandRunner& runner, const Environment& env,
                                   Clock& clock);
// `job environment`: the attempt's record, collected through ctx, into its file.
Provenance record_provenance(const std::string& log_base, const ProvenanceOptions& o, Context& ctx);

}  // namespace ddpctl
