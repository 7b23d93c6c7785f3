#pragma once
// Scaling reports: each run's metrics file (one JSON line per epoch, written
// by the bundled trainer or any program that writes the same keys) joined
// with Slurm's accounting, compared against the smallest shape, and printed
// as a table, Markdown, CSV or JSON (report_table.hpp), or plotted through
// gnuplot (report_plot.hpp). Collecting the rows from runs and Slurm, and
// planning from them, are the workflow's (report/report_collect.hpp).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "slurm/context.hpp"
#include "runs/provenance_record.hpp"
#include "runs/job_states.hpp"
#include "runs/output.hpp"
#include "runs/progress.hpp"
#include "runs/run_store.hpp"
#include "runs/usage.hpp"
#include "explain/usage_account.hpp"

namespace ddpctl {

// A metrics file (progress.hpp has its lines), warnings for lines it cannot read.
MetricsFile read_metrics(const std::string& path);
// img_per_s over the epochs after the first (all, if only one).
std::optional<double> mean_throughput(const MetricsFile& metrics);

struct ReportRow {
  std::string run_id, label, job_id;
  std::optional<JobState> state;  // as Slurm last said; none without a job or an answer
  int nodes = 1, ranks_per_node = 1, gpus_per_node = 0;
  int world() const { return nodes * ranks_per_node; }
  int gpus = 0;  // allocated GPUs (sacct), else nodes x gpus_per_node
  std::string metrics_path;
  bool has_metrics = false;  // its metrics file (or progress: pattern) had an epoch
  std::string problem;  // why numbers are missing (no job, no metrics file)
  std::string failure;  // how the job failed, first (failure.hpp), if it did
  int epochs_done = 0, epochs = 0;
  std::optional<double> train_loss, val_loss, train_acc, val_acc;
  std::optional<double> img_per_s;  // mean over epochs after the first (all, if only one)
  std::optional<double> images_per_epoch;  // img_per_s x epoch_s of the last epoch
  std::optional<double> speedup, efficiency;
  std::optional<double> wall_s;
  std::string wall_source;  // "slurm", "slurm, still running" or "metrics"
  std::optional<double> gpu_hours, node_hours;
  std::optional<double> mem0_peak, mem0_avg, mem0_mode, mem_max;
  std::string mem_kind;
  std::optional<double> rendezvous_s, first_step_s;
  // What the job used, from the job agent's samples (usage.hpp), for any
  // program: per GPU, the job's CPU (100 = a core), the largest node's RSS.
  std::optional<double> gpu_util_mean, gpu_mem_peak_mib, gpu_mem_mean_mib, gpu_mem_mode_mib, cpu_pct_mean;
  std::optional<long long> rss_peak_bytes;
  std::string usage_base;  // <output_dir>/<job name>_<job id>: where the samples are
  std::string code;        // the code it ran (snapshot.hpp's code_label); "" without a record
  std::string checkpoint;  // the checkpoint folder its jobs were given; "" none
  bool checkpoint_saved = false;  // something is in it
  std::optional<Provenance> provenance;  // what its latest attempt ran with, where recorded
  std::string slow;  // the ranks its watchdog found slow (straggler.hpp), "" for none
  // Its in-job restarts (restart:, in_job_restart.hpp), each with the time
  // between the failed step and the new one; a shrunk step (min_nodes)
  // marks the row: its throughput mixes world sizes.
  std::vector<std::string> in_job;
  // Its requeues (requeue.hpp's RequeueHistory): one run across them,
  // preemptions counted, and the time from each stop to the next start.
  std::vector<std::string> requeues;
  int preemptions = 0;
  double requeue_lost_s = 0;
  double requeue_ran_s = 0;  // the earlier attempts' run time (wall_s is the latest's)
  std::string partition;     // its shape's ("" : the profile's default)
  double in_job_lost_s = 0;  // from each failed step's last progress (else its end) to training again, summed
  std::string shrunk;  // "1 of 2 nodes from restart 1"; "" when never shrunk
  // GPU-hours of allocated GPUs no step used (spares, nodes left out): the
  // allocation's GPUs (sacct) beyond the step's.
  std::optional<double> idle_gpu_hours;
  // The communication check (comm_floor.hpp): the optimizer step (the
  // slowest rank's mean, epochs after the first), the model's parameters
  // and batch per rank (metrics), the busbw its fabric check judged by;
  // a multi-node row's step time beyond the one-node row's (the same code
  // and batch per rank), and its communication floor.
  std::optional<double> step_s, params, batch_per_rank, busbw_gbs, comm_s, comm_floor_s;
  std::string comm_note;  // its communication beyond twice the floor, in words; "" otherwise
  // Model FLOPs utilisation (mfu.hpp): where its metrics give the FLOPs per
  // sample and the profile its devices' peak; mfu_words its basis or why
  // it is unknown ("" without metrics).
  std::optional<double> flops_per_sample, mfu;
  std::string mfu_words;
  // What an ended run used, training and lost (usage_account.hpp); none
  // while it runs or without Slurm's accounting.
  std::optional<UsageAccount> account;
};

// Fills a row from a run, its job (as Slurm sees it; may be null) and the
// metrics file. `now` is for jobs still running.
ReportRow make_report_row(const Run& run, const Attempt* attempt, const Job* job, const MetricsFile* metrics,
                          long long now);
// The usage columns from the job's samples (read_usage of log_base, every
// attempt's); none without samples.
void add_usage(ReportRow& row, const std::string& log_base,
               const std::map<std::string, std::vector<UsageSample>>& samples);
// Speedup and efficiency against the row with the fewest ranks (the first of
// those) that has a throughput, within each group of rows that ran the same
// code (`code`): across two programs they would measure the change.
void compute_scaling(std::vector<ReportRow>& rows);
// A warning when the rows ran different code (commits, snapshots, in
// place), naming each and its rows; empty when they all ran the same.
std::string mixed_code_note(const std::vector<ReportRow>& rows);
// A warning when the rows' recorded provenance differs (torch, CUDA, NCCL,
// modules, the spec's variables...), naming each value and its rows; empty
// when they agree or fewer than two rows have a record.
std::string mixed_provenance_note(const std::vector<ReportRow>& rows);

// `ddpctl plan`: time and cost of shapes predicted from measured rows.
struct PlanShape {
  std::string label;
  int nodes = 1, ranks_per_node = 1, gpus_per_node = 0;
  int world() const { return nodes * ranks_per_node; }
  std::optional<double> busbw_gbs = std::nullopt;  // its partition's, from the profile (comm_floor.hpp)
};
// Preemption as earlier runs met it on one partition: how many, in how many
// hours of running, and the time from each stop to the next start.
struct PreemptionSeen {
  int runs = 0, preemptions = 0, requeues = 0;
  double ran_s = 0, lost_s = 0;
};
// By partition, from report rows (each run's latest attempt and its requeues).
std::map<std::string, PreemptionSeen> preemption_seen(const std::vector<ReportRow>& rows);
// What a run of `run_time_s` on preemptible capacity expects to lose to
// preemptions: the rate seen there (preemptions per second of running) x
// the run time x the mean time from a stop to the next start. `note` says
// it ("+6m for 0.5 expected preemptions at 12m each, seen in 3 earlier
// runs on scavenger"), or that none was seen. 0 without earlier runs there
// (`note` says the expectation is unknown).
double expected_preemption_s(const PreemptionSeen* seen, const std::string& partition, double run_time_s,
                             std::string& note);

struct Prediction {
  PlanShape shape;
  double efficiency = 1;
  std::string efficiency_from;  // "measured", "from shape 2x1", "assumed ideal"
  double img_per_s = 0, time_s = 0, node_hours = 0;
  std::optional<double> gpu_hours;  // none for CPU shapes
  // One optimizer step (the global batch at img_per_s) and the
  // communication floor of one step (comm_floor.hpp), where known.
  std::optional<double> step_s, comm_floor_s;
};
// Throughput = baseline (fewest ranks) x world ratio x efficiency; the
// efficiency is the shape's own if measured, else that of the measured shape
// with the nearest world size on the same side of the node boundary (one
// node vs several), else of any nearest one, else 1. Time = epochs x images
// per epoch / throughput + the baseline's time to the first step. Throws
// UserError when no row has a throughput.
std::vector<Prediction> predict(const std::vector<ReportRow>& measured, const std::vector<PlanShape>& shapes, int epochs);

}  // namespace ddpctl
