#pragma once
// How far a job got, as data: the progress file that rank 0 rewrites while it
// trains (job_states.hpp reads it) and the metrics file's epoch lines (report.hpp
// reads them); progress_read.hpp makes both from the log of a program that
// writes neither. Model layer (docs/architecture.md).
#include <optional>
#include <string>
#include <vector>

namespace ddpctl {

// The trainer's progress file: JSON written atomically by rank 0 at
// $DDPCTL_PROGRESS_FILE.
struct Progress {
  int epoch = 0, epochs = 0;
  long long step = 0, steps = 0;
  bool percent = false;   // step/steps is the share of the epoch done, not steps (no step count printed)
  double samples_per_s = 0;
  double it_per_s = 0;   // iterations (steps) per second, when only those are known
  std::optional<double> loss;
  double eta_s = -1;
  long long updated = 0;  // Unix seconds
  std::string source;     // "progress file", or the log a pattern was applied to
  // The bundled trainer's phase: "rendezvous", "training", "checkpointing",
  // "validating", "done"; "" where the file does not say.
  std::string phase;
};

// One epoch line of a metrics file (absent keys stay nullopt/empty).
struct EpochMetrics {
  int epoch = 0, epochs = 0, world_size = 0;
  std::optional<double> train_loss, val_loss, train_acc, val_acc, img_per_s, epoch_s;
  std::vector<double> peak_mem_mib;
  std::optional<double> mem0_peak, mem0_avg, mem0_mode;
  std::string mem_kind, model, device, amp;  // amp: off, bf16, fp16 (the precision of the step)
  std::optional<double> rendezvous_s, first_step_s;
  // The slowest rank's mean optimizer-step time (step_time_s), the model's
  // parameters and the batch per rank: report's communication check.
  std::optional<double> step_time_max, params, batch_size, steps;
  std::optional<double> flops_per_sample;  // a training step's FLOPs per sample: report's MFU
  long long time = 0;
};

struct MetricsFile {
  std::vector<EpochMetrics> epochs;  // one per epoch number, the latest line of each (requeues append)
  std::vector<std::string> warnings;  // "FILE:LINE: ..." for lines that could not be read
};

}  // namespace ddpctl
