#pragma once
// Readers for the run spec's sections other than the job shape.
#include <optional>
#include <string>

#include "spec/run_spec.hpp"
#include "base/yaml_reader.hpp"

namespace ddpctl {

std::optional<std::string> check_output_dir(const std::string& s);

void read_launch(MapReader& top, RunSpec& spec);       // launch, trainer, command (spec_launch.cpp)
void read_environment(MapReader& top, RunSpec& spec);  // modules, env, nccl, setup
void read_master(MapReader& top, RunSpec& spec);
void read_requeue(MapReader& top, RunSpec& spec);
// restart: {in_job, spares}; after read_running_sections (it needs the monitor).
void read_restart(MapReader& top, RunSpec& spec);
void read_progress_section(MapReader& top, RunSpec& spec);
// metric: 'regex' | [regex, ...] | {pattern: regex or list, file: rank0|batch}
void read_metric_section(MapReader& top, RunSpec& spec);
void read_running_sections(MapReader& top, RunSpec& spec);  // monitor, watchdog
void read_snapshot_section(MapReader& top, RunSpec& spec);  // spec_snapshot.cpp
// container: in a run spec, or (profile) in a cluster profile; spec_container.cpp.
void read_container_section(MapReader& top, ContainerSettings& c, bool profile);

// trainer.global_batch on `shape`: a multiple of its world size x batch_size
// within ddp-train's accumulation limits, or ddp-train would refuse it at
// start, after the queue wait. The error names the shape's label
// (spec_launch.cpp).
void check_global_batch(const RunSpec& spec, const Shape& shape, Diagnostics& diags);
// restart: on `shape`: the bundled trainer resumes on a restart, and
// restart.min_nodes is at most the shape's nodes, with a global_batch that
// every shrunk world size keeps (spec_launch.cpp).
void check_restart(const RunSpec& spec, const Shape& shape, Diagnostics& diags);

// Reads an `nccl:` section (shared with cluster profiles).
NcclSettings read_nccl_settings(MapReader& parent, const std::string& key);

// Environment names ddpctl sets itself and refuses in `env:`, with the reason.
std::optional<std::string> reserved_env_reason(const std::string& name);

// The environment variables a typed NCCL setting is exported as.
struct NcclOption {
  const char* key;
  std::vector<const char*> env;
  const char* doc;
};
const std::vector<NcclOption>& nccl_options();

}  // namespace ddpctl
