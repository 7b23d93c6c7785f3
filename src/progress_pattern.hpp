#pragma once
// Progress for a program ddpctl did not write: a run spec's `progress:`
// section names a regular expression (or a preset for what people actually
// print) that ddpctl applies to the job's rank-0 log, so that `status` shows
// the bar and ETA, and `report` the throughput, of torchrun, Lightning or
// Hugging Face programs too. The bundled trainer writes the progress and
// metrics files directly (docs/runs.md has the contract).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "job.hpp"
#include "progress.hpp"
#include "regex.hpp"
#include "run_record.hpp"
#include "run_spec.hpp"

namespace ddpctl {

// The bundled patterns: seed (`Epoch [e/E] ... Throughput: x img/s`, as
// ddp-train and the seed scripts print), huggingface (the Trainer's
// `{'loss': ..., 'epoch': ...}` dicts), lightning (`Epoch e: ...| s/S [..., x it/s, loss=...]`).
std::optional<ProgressSpec> progress_preset(const std::string& name);
std::vector<std::string> progress_preset_names();

// A pattern compiled (RE2: linear time, no recursion, whatever the log's
// lines or the pattern), its named groups by number. Both (?<name>...) and
// (?P<name>...) name a group. nullopt with `problem` set for a bad pattern,
// in the engine's own words.
struct CompiledPattern {
  Regex regex;
  std::map<std::string, int> groups;  // name -> group number
};
std::optional<CompiledPattern> compile_progress_pattern(const std::string& pattern, std::string* problem);
const std::vector<std::string>& progress_group_names();

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
// task 0's step log of the latest restart, or the batch log.
std::string progress_log(const RunShape& shape, const std::string& job_id);

// A running job's progress from its log (nullopt without a progress:
// section, or before the first matching line); the ETA from `now` and the
// attempt's start.
std::optional<Progress> pattern_progress(const RunShape& shape, const Job& job, long long now);

// Per-epoch metrics from the logs of every attempt (a later attempt's epoch
// replaces an earlier one's), for report; `source` names the log.
MetricsFile pattern_metrics(const RunShape& shape, const std::string& job_id, std::string* source);

}  // namespace ddpctl
