#pragma once
// Where the job agent runs, as Slurm's environment says (the job, this node,
// the attempt, its CPUs, GPUs and memory), and the spans its options take:
// what every `ddpctl job ...` subcommand starts from.
#include <string>
#include <vector>

#include "base/environment.hpp"

namespace ddpctl {

// Where the agent runs, as Slurm's environment says: the job, this node, the attempt.
struct JobPlace {
  std::string job_id;
  // What scontrol and scancel act on: the job's id, or an array task's
  // <array id>_<task id> (Slurm runs one task of an array under the
  // array's own id, which names every task of the array to them).
  std::string slurm_id;
  std::string node;       // SLURMD_NODENAME, else the host's name
  std::string cluster, conf;  // SLURM_CLUSTER_NAME, SLURM_CONF (JobMatch)
  int attempt = 0;        // SLURM_RESTART_COUNT
  int cpus = 0;           // SLURM_CPUS_ON_NODE
  int gpus = 0;           // SLURM_GPUS_ON_NODE
  long long mem_mib = 0;  // SLURM_MEM_PER_NODE
  std::vector<int> gpu_indices;  // the step's (SLURM_STEP_GPUS), else the job's (SLURM_JOB_GPUS)
};
// A UserError when SLURM_JOB_ID is not set: the agent runs inside a job.
JobPlace job_place(const Environment& env);
// "0,2-3" -> {0, 2, 3} (Slurm's GPU index lists).
std::vector<int> parse_gpu_list(const std::string& s);
// A span of the agent's options ("30s", "10m", "1h" or seconds); a UserError naming `option`.
double agent_seconds(const std::string& s, const std::string& option);

}  // namespace ddpctl
