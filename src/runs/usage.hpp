#pragma once
// What a running job uses, per node: the job agent (`ddpctl job sample`, one
// per node; sampler.hpp takes the samples) appends one JSON line per sample
// to <output_dir>/<job name>_<job id>.usage.<node>.jsonl every few seconds.
// status, report and the watchdog read those files (docs/running.md).
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ddpctl {

// One process as /proc/PID/stat and /proc/PID/environ show it.
struct ProcessUsage {
  int pid = 0;
  int ppid = 0;             // its parent (a data loader worker's is its rank's process)
  std::optional<int> rank;  // RANK in its environment
  std::optional<int> task;  // SLURM_PROCID, for processes of a step
  bool training = false;    // a process of the training step (DDPCTL_TRAINING=1)
  char state = '?';         // R, S, D (waiting on I/O), Z, T, ...
  double cpu_s = 0;         // user + system time
  double wait_s = 0;        // its threads' time runnable but waiting for a CPU (schedstat); training processes only
  long long rss_bytes = 0;
};

struct RankUsage {
  std::optional<int> rank;
  std::optional<int> task;
  double cpu_s = 0;
  std::optional<double> cpu_pct;  // over the last interval; none at the first sample
  // Of the last interval, its threads' time runnable but not running: CPU it
  // waited for (a quota's throttling, or others on its cores); 100 = a core.
  std::optional<double> wait_pct;
  long long rss_bytes = 0;
  int procs = 0;
  std::string states;  // each process's state letter, e.g. "SSR"
};

struct GpuUsage {
  int index = 0;
  double util_pct = 0, mem_used_mib = 0, mem_total_mib = 0;
};

struct UsageSample {
  double t = 0;  // Unix seconds
  std::string node, job_id;
  int attempt = 0;  // SLURM_RESTART_COUNT
  double interval_s = 0;
  int cpus = 0;  // the job's CPUs on this node (SLURM_CPUS_ON_NODE)
  std::optional<double> cpu_pct;  // every process of the job on this node; 100 = one core
  long long rss_bytes = 0;
  int procs = 0;
  std::vector<RankUsage> ranks;  // the training step's processes by rank (or task)
  std::vector<GpuUsage> gpus;
  std::string gpu_note;  // why there are no GPU figures ("no nvidia-smi on g1", its error)
  long long mem_total_bytes = 0, mem_available_bytes = 0;
  long long mem_limit_bytes = 0;  // the job's memory on this node (SLURM_MEM_PER_NODE), 0: not set
};

nlohmann::json usage_sample_json(const UsageSample& s);
// nullopt for a line that is not a sample (a torn last line while it is written).
std::optional<UsageSample> parse_usage_sample(const std::string& line);

// The samples file of one node, and every node's of a job.
std::string usage_path(const std::string& log_base, const std::string& node);
// The samples of every node (by node, in time order), of `attempt` only when >= 0;
// with `tail_bytes`, only from each file's last that many bytes (status reads
// the recent samples of a long job, not its whole history).
std::map<std::string, std::vector<UsageSample>> read_usage(const std::string& log_base, int attempt = -1,
                                                           long long tail_bytes = 0);

// The latest sample of each node, summed for the job (status).
struct UsageNow {
  double t = 0;  // the oldest of the latest samples
  std::optional<double> cpu_pct;
  int cpus = 0;
  long long rss_bytes = 0;
  int gpus = 0;
  std::optional<double> gpu_util_pct;  // mean over GPUs
  double gpu_mem_used_mib = 0, gpu_mem_total_mib = 0;
  std::map<std::string, UsageSample> nodes;
};
std::optional<UsageNow> usage_now(const std::map<std::string, std::vector<UsageSample>>& samples);
// "GPU 97% 61/80 GiB · CPU 390% RSS 12.1 GiB"
std::string format_usage(const UsageNow& u);
nlohmann::json usage_json(const UsageNow& u, double now);

// Over a whole job (report): the figures of the site guides' analyze_memory.py.
struct UsageSummary {
  int samples = 0;
  std::optional<double> gpu_util_mean, gpu_mem_peak_mib, gpu_mem_mean_mib, gpu_mem_mode_mib;  // per GPU
  std::optional<double> cpu_pct_mean;  // the job's, all nodes
  long long rss_peak_bytes = 0;        // the largest node's
};
UsageSummary summarize_usage(const std::map<std::string, std::vector<UsageSample>>& samples);


}  // namespace ddpctl
