#include "runs/job_files.hpp"

#include <fmt/format.h>

namespace ddpctl::job_files {

std::string base_name(std::string_view job_name, std::string_view job_id) { return fmt::format("{}_{}", job_name, job_id); }

std::string log_base(std::string_view output_dir, std::string_view job_name, std::string_view job_id) {
  return fmt::format("{}/{}", output_dir, base_name(job_name, job_id));
}

std::string batch_out_pattern(std::string_view output_dir) { return fmt::format("{}/%x_%j.out", output_dir); }
std::string batch_err_pattern(std::string_view output_dir) { return fmt::format("{}/%x_%j.err", output_dir); }
std::string batch_out(std::string_view base) { return fmt::format("{}.out", base); }
std::string batch_err(std::string_view base) { return fmt::format("{}.err", base); }

std::string step_log(std::string_view base, std::string_view attempt, std::string_view task) {
  return fmt::format("{}.restart{}.{}.out", base, attempt, task);
}
std::string step_log(std::string_view base, int attempt, int task) {
  return step_log(base, std::to_string(attempt), std::to_string(task));
}

std::string progress(std::string_view base) { return fmt::format("{}.progress.json", base); }
std::string metrics(std::string_view base) { return fmt::format("{}.metrics.jsonl", base); }

std::string usage(std::string_view base, std::string_view node) { return fmt::format("{}.usage.{}{}", base, node, kUsageSuffix); }
std::string usage_prefix(std::string_view base_name) { return fmt::format("{}.usage.", base_name); }

std::string stall_record(std::string_view base) { return fmt::format("{}.stall.json", base); }
std::string slow(std::string_view base) { return fmt::format("{}.slow.json", base); }
std::string agent_stderr(std::string_view base) { return fmt::format("{}.agent.err", base); }

std::string monitor_off(std::string_view base, std::string_view attempt) { return fmt::format("{}.restart{}.monitor-off", base, attempt); }
std::string monitor_off(std::string_view base, int attempt) { return monitor_off(base, std::to_string(attempt)); }
std::string agent_error(std::string_view base, std::string_view attempt) { return fmt::format("{}.restart{}.agent-error", base, attempt); }
std::string agent_error(std::string_view base, int attempt) { return agent_error(base, std::to_string(attempt)); }

std::string node_check(std::string_view base, int attempt, std::string_view node) {
  return fmt::format("{}.restart{}.check.{}.json", base, attempt, node);
}
std::string fabric(std::string_view base, int attempt) { return fmt::format("{}.restart{}.fabric.json", base, attempt); }
std::string in_job_restarts(std::string_view base, int attempt) {
  return fmt::format("{}.restart{}.in-job.json", base, attempt);
}
std::string provenance(std::string_view base, int attempt) { return fmt::format("{}.restart{}.environment.json", base, attempt); }
std::string stacks(std::string_view base, int attempt, std::string_view node) {
  return fmt::format("{}.restart{}.stacks.{}.txt", base, attempt, node);
}
std::string stacks_request(std::string_view base, int attempt) { return fmt::format("{}.restart{}.stacks-request", base, attempt); }
std::string python_hook(std::string_view base) { return fmt::format("{}.python", base); }
std::string state_dump(std::string_view base, std::string_view node, long long pid) {
  return fmt::format("{}.state.{}.{}.txt", base, node, pid);
}

}  // namespace ddpctl::job_files
