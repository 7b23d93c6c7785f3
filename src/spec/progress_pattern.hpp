#pragma once
// Progress for a program ddpctl did not write: a run spec's `progress:`
// section names a regular expression (or a preset for what people actually
// print) that ddpctl applies to the job's rank-0 log, so that `status` shows
// the bar and ETA, and `report` the throughput, of torchrun, Lightning or
// Hugging Face programs too. The bundled trainer writes the progress and
// metrics files directly (docs/runs.md has the contract).
// This file is the spec's side: the presets and a pattern compiled and
// checked as the spec reader does. progress_read.hpp applies it to a log.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/regex.hpp"
#include "spec/run_spec.hpp"

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

}  // namespace ddpctl
