#pragma once
// Joins a run spec with its cluster profile: checks the spec against the
// site's partitions and GPU types, and computes what each script asks Slurm for.
#include <optional>
#include <string>
#include <vector>

#include "cluster.hpp"
#include "spec.hpp"

namespace ddpctl {

struct ResolvedShape {
  std::string label;
  std::string job_name;
  std::string script_name;  // file name of the rendered script
  std::string partition;    // may be empty: the cluster's default partition
  int nodes = 1;
  int gpus_per_node = 0;
  int ranks_per_node = 1;
  int tasks_per_node = 1;  // srun tasks: 1 launcher (per-node) or one per rank (per-gpu)
  std::optional<int> cpus_per_task;
  long long time_s = 0;
  std::vector<std::string> directives;  // "--nodes=1", ... one per #SBATCH line

  int world_size() const { return nodes * ranks_per_node; }
};

struct ResolvedRun {
  RunSpec spec;
  ClusterProfile profile;
  std::vector<ResolvedShape> shapes;
  std::vector<std::string> modules;  // the profile's, then the spec's
  EnvList env;                       // the profile's, overridden by the spec's
  EnvList nccl_env;                  // NCCL/Torch variables, profile then spec
  std::string master_interface;      // empty: resolve the first node's hostname
};

// Throws UserError listing every problem.
ResolvedRun resolve_run(RunSpec spec, ClusterProfile profile);

// Loads the spec, finds and loads its profile, and resolves them.
ResolvedRun load_and_resolve(const std::string& spec_path, const std::vector<std::string>& overrides);

// The argv that each srun task runs (before the per-task rank prelude).
std::vector<std::string> launch_argv(const ResolvedRun& run, const ResolvedShape& shape);

}  // namespace ddpctl
