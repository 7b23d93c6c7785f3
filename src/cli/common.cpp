#include "common.hpp"

#include <algorithm>
#include <cstdlib>
#include <unistd.h>

#include "experiments.hpp"
#include "paths.hpp"
#include "values.hpp"

namespace ddpctl::cli {

std::string templates_dir(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("DDPCTL_TEMPLATES"); env && *env) return env;
  return data_dir() + "/templates";
}

bool use_color() {
  static const bool on = isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR");
  return on;
}

std::string paint(const std::string& text, const char* ansi_code) {
  if (!use_color() || !ansi_code || !*ansi_code) return text;
  return std::string("\033[") + ansi_code + "m" + text + "\033[0m";
}

const char* state_color(const std::string& state) {
  if (state == "RUNNING" || state == "COMPLETING") return "32";
  if (state == "COMPLETED") return "1;32";
  if (state == "PENDING" || state == "REQUEUED" || state == "CONFIGURING") return "33";
  if (state == "UNKNOWN") return "35";
  if (state == "CANCELLED") return "2";
  return "31";
}

std::vector<JobRef> resolve_targets(const std::vector<std::string>& args, const std::string& root,
                                    std::vector<Run>& runs) {
  std::vector<std::string> bare;
  std::vector<std::string> only_job;  // per run: "" = all its jobs, else the one job asked for
  for (const auto& arg : args) {
    if (is_decimal_number(arg) && arg.size() < 19) {
      bare.push_back(arg);
    } else {
      for (Run& run : find_runs(root, arg)) {  // an experiment names several
        runs.push_back(std::move(run));
        only_job.emplace_back();
      }
    }
  }
  // A job id that belongs to a run is shown with its run.
  std::vector<std::string> orphans;
  std::vector<Run> all = bare.empty() ? std::vector<Run>{} : list_runs(root);
  for (const auto& id : bare) {
    bool found = false;
    for (const auto& run : all)
      for (const auto& a : run.attempts)
        if (!found && a.job_id == id) {
          runs.push_back(run);
          only_job.push_back(id);
          found = true;
        }
    if (!found) orphans.push_back(id);
  }
  // Every run is in place now, so pointers into `runs` stay valid.
  std::vector<JobRef> refs;
  for (size_t i = 0; i < runs.size(); ++i)
    for (const auto& a : runs[i].attempts)
      if (!a.job_id.empty() && (only_job[i].empty() || only_job[i] == a.job_id))
        refs.push_back({a.job_id, &runs[i], &a});
  for (const auto& id : orphans) refs.push_back({id});
  return refs;
}

double poll_interval_s() {
  if (const char* v = std::getenv("DDPCTL_POLL_INTERVAL"); v && *v) {
    double s = std::atof(v);
    if (s > 0) return s;
  }
  return 2.0;
}

}  // namespace ddpctl::cli
