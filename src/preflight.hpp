#pragma once
// Checks a resolved shape against what the live cluster reports, before
// anything is queued: the partition exists, enough nodes have the GPU type,
// GPU count and CPUs, and the account is one of the user's.
#include "diagnostics.hpp"
#include "resolve.hpp"
#include "slurm.hpp"

namespace ddpctl {

// Problems name the spec's file, line and field (the shape's own where
// `alternatives:` or `sweep:` set it).
Diagnostics preflight(const ResolvedRun& run, const ResolvedShape& shape, SlurmClient& slurm);

// The program the job runs (trainer.program, or the first word of a list
// `command:`) must be an executable here (on PATH, or at the path given),
// unless modules, setup lines or env: PATH may change what the nodes find.
void check_program(const ResolvedRun& run, Diagnostics& diags);

// With a container (container.hpp), the runtime and the image instead:
// check_container's problems. Pyxis: the cluster's srun must list
// --container-image. container_warnings: what is allowed but costly (a
// registry image on several nodes).
void check_pyxis(const ResolvedRun& run, SlurmClient& slurm, Diagnostics& diags);
std::vector<std::string> container_warnings(const ResolvedRun& run);

// trainer.data must be a folder here (the nodes see the same path), as
// ddp-train checks at start; "synthetic" needs none.
void check_trainer_data(const ResolvedRun& run, Diagnostics& diags);

// Every `sbatch:` option must be one this cluster's sbatch lists in --help.
void check_sbatch_options(const ResolvedRun& run, SlurmClient& slurm, Diagnostics& diags);

// The program's and every shape's problems at once; throws UserError if any.
void preflight_all(const ResolvedRun& run, const std::vector<const ResolvedShape*>& shapes, SlurmClient& slurm);

}  // namespace ddpctl
