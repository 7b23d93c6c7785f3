#pragma once
// A shape's progress: pattern (progress_pattern.hpp) applied to what the job
// wrote: the rank-0 log read for status's bar and ETA, every attempt's log
// for report's per-epoch metrics. Reading runs, not the spec: the log's path
// comes from the run's record (job_files, task_logs).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "slurm/slurm_job.hpp"
#include "runs/progress.hpp"
#include "spec/progress_pattern.hpp"
#include "runs/run_record.hpp"
#include "spec/run_spec.hpp"

namespace ddpctl {

// Applies the pattern to `lines` (a log, split at \n and \r as tqdm writes):
// the latest values, and per epoch its last throughput and loss.
struct PatternReading {
  std::optional<double> epoch;  // as printed (may be fractional: Hugging Face)
  std::optional<int> epochs;
  std::optional<long long> step, steps;
  std::optional<double> loss, samples_per_s, it_per_s;
  std::map<int, EpochMetrics> per_epoch;  // by 1-based epoch
  bool matched = false;
};
PatternReading read_with_pattern(const ProgressSpec& spec, const std::vector<std::string>& lines);

// Progress as status shows it; `elapsed_s` (since the attempt started) gives the ETA.
std::optional<Progress> progress_from(const PatternReading& r, long long elapsed_s);

// The log a shape's progress: section reads for the job's latest attempt:
// task 0's step log of the latest attempt, or the batch log.
std::string progress_log(const RunShape& shape, const std::string& job_id);

// A running job's progress from its log (nullopt without a progress:
// section, or before the first matching line); the ETA from `now` and the
// attempt's start.
std::optional<Progress> pattern_progress(const RunShape& shape, const Job& job, long long now);

// Per-epoch metrics from the logs of every attempt (a later attempt's epoch
// replaces an earlier one's), for report; `source` names the log.
MetricsFile pattern_metrics(const RunShape& shape, const std::string& job_id, std::string* source);

}  // namespace ddpctl
