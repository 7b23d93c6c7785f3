#include "script/script_env.hpp"

#include <algorithm>

#include "base/shell.hpp"

namespace ddpctl {

std::string env_assigned(const std::string& name, const std::string& value) {
  // Quoted, and a user's $NAME expanding; ddpctl's own (DDPCTL_CELL, a
  // grid's values: never a user's env:, which cannot set DDPCTL_ names)
  // are the bytes ddpctl put there, whatever they hold.
  bool own = name.rfind("DDPCTL_", 0) == 0;
  return own ? shell_quote(value) : shell_assignment_value(name, value);
}

std::string env_exports(const EnvList& env) {
  std::string out;
  for (const auto& [name, value] : env) {
    if (!out.empty()) out += "; ";
    out += "export " + name + "=" + env_assigned(name, value);
  }
  return out;
}

std::vector<std::string> script_env_names(const ResolvedRun& run) {
  const RunSpec& spec = run.spec;
  std::vector<std::string> names;
  for (const auto* list : {&run.env, &run.nccl_env})
    for (const auto& [name, value] : *list) names.push_back(name);
  for (const char* n : {"MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "NNODES", "NPROC_PER_NODE", "LOCAL_WORLD_SIZE"})
    names.push_back(n);
  if (run.snapshot) names.insert(names.end(), {"DDPCTL_SNAPSHOT", "PYTHONPATH"});
  // The Flight Recorder's (launch.sh), where the watchdog may ask for dumps.
  if (spec.monitor.enabled && spec.watchdog.enabled)
    for (const char* n : {"TORCH_FR_BUFFER_SIZE", "TORCH_NCCL_TRACE_BUFFER_SIZE", "TORCH_NCCL_DUMP_ON_TIMEOUT",
                          "TORCH_FR_DUMP_TEMP_FILE", "TORCH_NCCL_DEBUG_INFO_TEMP_FILE", "TORCH_NCCL_DEBUG_INFO_PIPE_FILE"})
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  return names;
}

}  // namespace ddpctl
