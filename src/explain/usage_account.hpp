#pragma once
// What a run used (docs/report.md "What each run used"): the allocation
// Slurm gave each attempt (its elapsed time x its nodes, CPUs and GPUs, as
// sacct says them) split into training and the time lost, in the order an
// attempt spends it: the node and fabric checks, the start (processes,
// rendezvous, the first step), training, in-job restarts, a stall the
// watchdog saw, and what follows the last epoch (an ended run's tail; a
// requeued or preempted attempt's work since its last epoch, redone unless
// a checkpoint kept it); spares and nodes left out idle beside the step.
// The parts add up to Slurm's figures. With the energy where the site's
// accounting gathers it, and notes in words as jobstats gives them.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "slurm/slurm_job.hpp"

namespace ddpctl {

// One attempt as the account reads it: Slurm's times and allocation, and
// what the job's files say happened in it (Unix seconds).
struct AttemptFacts {
  int attempt = 0;
  long long start = 0, end = 0;
  int alloc_nodes = 1, cpus = 0, gpus = 0;
  std::optional<double> energy_j;
  double checks_s = 0;                       // the node check's slowest node and the fabric check
  std::optional<double> first_step, last_epoch_end;  // from the metrics file's lines of this attempt
  bool metrics_anywhere = false;             // the run writes metrics (in some attempt)
  double in_job_lost_s = 0;                  // its in-job restarts' lost time
  double stalled_s = 0;                      // without progress, where its watchdog found a stall
};

struct AccountPart {
  std::string key;    // training, checks, start, restarts, stalled, after, interrupted, unsplit, idle
  std::string words;  // "training", "node and fabric checks", ...
  double seconds = 0;  // of the step's nodes' time (idle: of the idle nodes')
  double node_s = 0, cpu_s = 0, gpu_s = 0;
};

// One rank's share (rank_account.hpp): its device's hours while the step
// held them, split as the run's parts are, and what its samples show.
struct RankAccount {
  int rank = 0;
  std::string node;                  // where its latest samples came from
  double held_s = 0, training_s = 0;  // the step's time (every part but idle), and its training part
  double node_s = 0, cpu_s = 0, gpu_s = 0;  // its share of the step's allocation over held_s
  std::optional<double> busy_pct;    // its GPU's mean utilisation, else its CPU over its CPUs' 100% each
  std::optional<double> cpu_wait_pct;  // its threads runnable but waiting for a CPU (100 = a core)
  long long rss_peak_bytes = 0;
  std::optional<double> mem_peak_mib;  // the metrics' peak_mem_mib (CUDA allocator or RSS)
};

struct UsageAccount {
  std::vector<AccountPart> parts;  // in that order, parts of no time left out
  int attempts = 0;
  double elapsed_s = 0;                     // summed over attempts (sacct's Elapsed)
  double node_s = 0, cpu_s = 0, gpu_s = 0;  // summed elapsed x allocation: Slurm's figures
  bool cpus_known = true;                   // every attempt's CPUs known (sacct's; not squeue's)
  std::optional<double> energy_kwh;         // every attempt's ConsumedEnergy, where gathered
  std::string energy_note;                  // "not recorded by this site (...)" where not
  std::vector<std::string> notes;           // jobstats-like, in words
  std::optional<double> mfu;                // model FLOPs utilisation (mfu.hpp), where known
  std::string mfu_words;                    // its basis, or "unknown: " and why
  std::vector<RankAccount> ranks;           // by rank, where the samples name them (report)
  double share(const std::string& key) const;  // of node_s
};

// The account of `attempts` (oldest first) whose step runs on `step_nodes`
// nodes (the rest of each allocation are spares or left out).
UsageAccount account_usage(const std::vector<AttemptFacts>& attempts, int step_nodes);

// The facts from the job's files (<log base>: checks, in-job restarts,
// stall) and metrics file, for Slurm's attempts of the job (oldest first).
std::vector<AttemptFacts> attempt_facts(const std::string& log_base, const std::string& metrics_path,
                                        const std::vector<Job>& attempts);

// Notes in words from what the job agent sampled: the GPUs' mean
// utilisation, the peak RSS against the memory asked, the CPUs' use.
struct UsageSeen {
  std::optional<double> gpu_util_mean, cpu_pct_mean;
  std::optional<long long> rss_peak_bytes;
  long long mem_asked_mib = 0;
  int cpus = 0;
};
void add_usage_notes(UsageAccount& a, const UsageSeen& seen);

// "0.120 node-h: 81% training, 9% node and fabric checks, ...": one line.
std::string describe_account(const UsageAccount& a);
nlohmann::json account_json(const UsageAccount& a);
// "per rank: 0.031 GPU-h each, 81% of it training; busy (its GPU): 0 g1 91%, ...";
// "" without ranks.
std::string describe_ranks(const UsageAccount& a);

}  // namespace ddpctl
