#pragma once
// Taking a usage sample on a node (the job agent's `ddpctl job sample`): the
// job's processes from /proc, its GPUs from nvidia-smi. usage.hpp has the
// sample and its file.
//
// The job's processes are found by their environment (SLURM_JOB_ID), not by
// the job's cgroup: that works under every proctrack plugin and on nodes
// without cgroup v2, and it tells the ranks apart (RANK, else SLURM_PROCID).
// RSS is summed over processes: pages two processes share are counted twice.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/process.hpp"
#include "runs/usage.hpp"

namespace ddpctl {

// Which processes are the job's: SLURM_JOB_ID is `job_id`, and each other
// variable here that a process has equals the agent's, for the kernels that
// several nodes share (the local test clusters' do: the same node names on
// each cluster, and job ids counting from 1 on each). Empty: not compared.
struct JobMatch {
  std::string job_id;
  std::string node;     // SLURMD_NODENAME
  std::string cluster;  // SLURM_CLUSTER_NAME
  std::string conf;     // SLURM_CONF: the cluster's slurm.conf, as its slurmd gave it
};

// The processes of one job on this node, read from `proc_root` (/proc, or a
// test's fake). Environments are read once per process (cached by pid and
// start time). Processes marked DDPCTL_AGENT_PROCESS=1 (the agent) are left out.
class JobProcessReader {
 public:
  JobProcessReader(std::string proc_root, JobMatch match, long ticks_per_s, long page_size);
  std::vector<ProcessUsage> read();

 private:
  struct Identity {
    unsigned long long start = 0;
    bool ours = false, training = false;
    std::optional<int> rank, task;
  };
  std::string root_;
  JobMatch match_;
  long ticks_, page_;
  std::map<int, Identity> known_;
};

// `nvidia-smi --query-gpu=index,utilization.gpu,memory.used,memory.total
// --format=csv,noheader,nounits`; nullopt with `problem` when it is not that.
std::optional<std::vector<GpuUsage>> parse_nvidia_smi(const std::string& text, std::string* problem);
const std::vector<std::string>& nvidia_smi_query();

// Takes samples: the processes' CPU time since the last sample, RSS, GPUs.
class Sampler {
 public:
  struct Options {
    std::string proc_root = "/proc";
    std::string node, job_id;
    std::string cluster, conf;  // JobMatch's
    int attempt = 0, cpus = 0;
    long ticks_per_s = 100, page_size = 4096;
    std::vector<int> gpu_indices;  // the job's GPUs (SLURM_JOB_GPUS); empty: every GPU shown
    long long mem_limit_bytes = 0;
  };
  Sampler(Options o, CommandRunner& runner);
  UsageSample take(double now);

 private:
  // The job's GPUs by nvidia-smi into `s`, or why not into gpu_note_.
  void take_gpus(UsageSample& s);
  Options o_;
  CommandRunner& runner_;
  JobProcessReader reader_;
  std::map<int, double> last_cpu_;  // pid -> CPU seconds at the last sample
  std::map<int, double> last_wait_;  // pid -> seconds its threads waited for a CPU, at the last sample
  double last_t_ = 0;
  bool first_ = true, query_gpus_ = true;
  std::string gpu_note_;
};

}  // namespace ddpctl
