#include "agent/job_place.hpp"

#include <fmt/format.h>

#include "base/diagnostics.hpp"
#include "base/text.hpp"
#include "base/values.hpp"

namespace ddpctl {

JobPlace job_place(const Environment& env) {
  JobPlace p;
  p.job_id = env.value("SLURM_JOB_ID");
  if (p.job_id.empty())
    throw UserError(Location{"SLURM_JOB_ID"}, "", "ddpctl job runs inside a Slurm job (SLURM_JOB_ID is not set)");
  p.slurm_id = p.job_id;
  if (std::string array = env.value("SLURM_ARRAY_JOB_ID"), task = env.value("SLURM_ARRAY_TASK_ID");
      !array.empty() && !task.empty())
    p.slurm_id = array + "_" + task;
  p.node = env.value("SLURMD_NODENAME", env.hostname());
  p.cluster = env.value("SLURM_CLUSTER_NAME");
  p.conf = env.value("SLURM_CONF");
  auto number = [&](const char* name) {
    std::string problem;
    return parse_int(env.value(name), 0, 1LL << 40, &problem).value_or(0);
  };
  p.attempt = static_cast<int>(number("SLURM_RESTART_COUNT"));
  p.cpus = static_cast<int>(number("SLURM_CPUS_ON_NODE"));
  p.gpus = static_cast<int>(number("SLURM_GPUS_ON_NODE"));
  p.mem_mib = number("SLURM_MEM_PER_NODE");
  p.gpu_indices = parse_gpu_list(env.value("SLURM_STEP_GPUS", env.value("SLURM_JOB_GPUS")));
  return p;
}

std::vector<int> parse_gpu_list(const std::string& s) {
  std::vector<int> out;
  std::string problem;
  for (const auto& part : split(s, ',')) {
    size_t dash = part.find('-');
    if (dash != std::string::npos) {
      auto a = parse_int(part.substr(0, dash), 0, 4096, &problem), b = parse_int(part.substr(dash + 1), 0, 4096, &problem);
      if (a && b)
        for (long long i = *a; i <= *b; i++) out.push_back(static_cast<int>(i));
    } else if (auto v = parse_int(part, 0, 4096, &problem)) {
      out.push_back(static_cast<int>(*v));
    }
  }
  return out;
}

double agent_seconds(const std::string& s, const std::string& option) {
  std::string problem;
  if (auto v = parse_span(s, &problem)) return static_cast<double>(*v);
  throw UserError(Location{option}, "", fmt::format("{} is not a duration (30s, 10m, 1h)", printable(s)));
}

}  // namespace ddpctl
