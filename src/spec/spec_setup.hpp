#pragma once
// The job's setup as the run spec writes it: modules:, env:, nccl: (typed
// NCCL settings, shared with cluster profiles) and setup:, what the script
// does before its step (environment.sh); and the variables ddpctl sets
// itself, which env: may not set.
#include <optional>
#include <string>
#include <vector>

#include "spec/run_spec.hpp"
#include "base/yaml_reader.hpp"

namespace ddpctl {

void read_job_setup(MapReader& top, RunSpec& spec);  // modules, env, nccl, setup

// Reads an `nccl:` section (shared with cluster profiles).
NcclSettings read_nccl_settings(MapReader& parent, const std::string& key);

// Environment names ddpctl sets itself and refuses in `env:`, with the reason.
std::optional<std::string> reserved_env_reason(const std::string& name);

// What is wrong with `value` for the env: entry `name` (over Linux's
// 128 KiB for one variable; a PATH that replaces the job's own), if anything.
std::optional<std::string> env_value_problem(const std::string& name, const std::string& value);

// The environment variables a typed NCCL setting is exported as.
struct NcclOption {
  const char* key;
  std::vector<const char*> env;
  const char* doc;
};
const std::vector<NcclOption>& nccl_options();

}  // namespace ddpctl
