#include "explain/status_extras.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <tuple>

#include "base/text.hpp"

namespace ddpctl {

TaskAttempts task_attempts(std::vector<Job> records) {
  TaskAttempts out;
  std::map<std::tuple<std::string, int, std::string>, std::vector<Job>> tasks;
  for (Job& j : records) {
    if (!j.array_task_id) {
      out.latest.push_back(std::move(j));
      continue;
    }
    tasks[{j.array_job_id, *j.array_task_id, j.id}].push_back(std::move(j));
  }
  for (auto& [key, list] : tasks) {
    std::stable_sort(list.begin(), list.end(),
                     [](const Job& a, const Job& b) { return a.submit_time.value_or(0) < b.submit_time.value_or(0); });
    Job latest = std::move(list.back());
    list.pop_back();
    std::vector<Job>& earlier = out.earlier[latest.id];
    for (Job& j : list)
      if (j.name == latest.name) earlier.push_back(std::move(j));
    // sacct has no requeue count; its records of the task do.
    latest.requeues = std::max(latest.requeues, static_cast<int>(earlier.size()));
    out.latest.push_back(std::move(latest));
  }
  return out;
}

std::optional<Failure> StatusExtras::failure(const RunShape& shape, const Job& job) {
  return explain_failure(shape, job, states_, slurm_, &nodes_);
}

std::vector<Job> StatusExtras::earlier(const Job& job) {
  if (auto e = states_.ends.find(job.id); e != states_.ends.end()) return e->second.earlier;
  if (auto e = states_.earlier.find(job.id); e != states_.earlier.end()) return e->second;
  if (!job.array_task_id) {
    std::vector<Job> all = slurm_.attempts(job.id).jobs;
    if (!all.empty()) all.pop_back();  // the current attempt
    return all;
  }
  // An array task as <array>_<task>: its own id may be the array's, for
  // which sacct answers every task's records, in the order they were
  // (re)submitted.
  auto split = task_attempts(slurm_.attempts(fmt::format("{}_{}", submission_id(job), *job.array_task_id)).jobs);
  auto e = split.earlier.find(job.id);
  return e == split.earlier.end() ? std::vector<Job>() : e->second;
}

std::string StatusExtras::preemptor(const Job& attempt) {
  if (!attempt.end_time || attempt.nodes.empty() || attempt.nodes == "None assigned") return "";
  const long long end = *attempt.end_time;
  // The preemptor starts once the preempted job's nodes are free: at its
  // end, or a little after (its grace, KillWait, the scheduler's pass).
  JobQuery q = slurm_.ran_on(attempt.nodes, end - 5, end + 600);
  const Job* first = nullptr;
  for (const auto& j : q.jobs) {
    if (j.id == attempt.id || !j.start_time || *j.start_time < end - 5 || *j.start_time > end + 600) continue;
    // It ran after the attempt started, and still ran when it ended: a job
    // that came and went on the nodes just before is not it.
    if (attempt.start_time && *j.start_time < *attempt.start_time) continue;
    if (j.end_time && *j.end_time < end) continue;
    if (j.partition == attempt.partition) continue;
    if (!first || *j.start_time < *first->start_time) first = &j;
  }
  if (!first) return "";
  return first->partition.empty() ? fmt::format("job {}", plain_line(first->id, 40))
                                  : fmt::format("job {} (partition {})", plain_line(first->id, 40), plain_line(first->partition, 60));
}

}  // namespace ddpctl
