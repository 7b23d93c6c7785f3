#pragma once
// How a running job is watched: what its program prints (`progress:`,
// `metric:`) and the job agent that reads it (`monitor:`, `watchdog:`).
#include "spec/run_spec.hpp"
#include "base/yaml_reader.hpp"

namespace ddpctl {

// progress: preset | {preset or pattern, file, epochs, epoch_base}
void read_progress_section(MapReader& top, RunSpec& spec);
// metric: 'regex' | [regex, ...] | {pattern: regex or list, file: rank0|batch}
void read_metric_section(MapReader& top, RunSpec& spec);
void read_running_sections(MapReader& top, RunSpec& spec);  // monitor, watchdog

}  // namespace ddpctl
