#pragma once
// Checks a resolved shape against what the live cluster reports, before
// anything is queued: the partition exists, enough nodes have the GPU type,
// GPU count and CPUs, and the account is one of the user's.
#include "base/diagnostics.hpp"
#include "slurm/site_limits_check.hpp"
#include "script/resolve.hpp"
#include "slurm/slurm.hpp"

namespace ddpctl {

// Problems name the spec's file, line and field (the shape's own where
// `alternatives:` or `sweep:` set it). With the site's limits
// (site_limits_read.hpp), also what they say of the shape (site_limits_check.hpp): a limit
// it breaks is an error here ("it would pend forever"); what holds it now or
// a reservation in its way is left in `feasibility` for the caller to say.
Diagnostics preflight(const ResolvedRun& run, const ResolvedShape& shape, SlurmClient& slurm,
                      const SiteLimits* limits = nullptr, Feasibility* feasibility = nullptr);

// What the limits check asks about a shape: its size, time, partition (the
// site's default when the spec names none), account, QOS, and the nodes that
// have its GPUs and CPUs.
JobAsk job_ask(const ResolvedShape& shape, const NodeQuery& nodes, const SiteLimits& limits);

// One shape's verdict, for the caller to print (limit_warnings) and act on
// (--fit-time, a race's ranking).
struct ShapeLimits {
  std::string label;
  Feasibility feasibility;
};
// The words of a NotNow or Later verdict ("shape 1x2: ..."): warnings.
std::vector<std::string> limit_warnings(const std::vector<ShapeLimits>& shapes);

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
// Reads the site's limits once (into `limits` when given) and returns each
// shape's verdict.
std::vector<ShapeLimits> preflight_all(const ResolvedRun& run, const std::vector<const ResolvedShape*>& shapes,
                                       SlurmClient& slurm, SiteLimits* limits = nullptr);

}  // namespace ddpctl
