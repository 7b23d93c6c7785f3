#include "explain/requeue.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "base/files.hpp"
#include "base/regex.hpp"
#include "runs/job_files.hpp"
#include "runs/task_logs.hpp"

namespace ddpctl {

std::string Requeue::describe() const {
  std::string out = of ? fmt::format("attempt {} of {}", attempt, *of) : fmt::format("attempt {}", attempt);
  if (why.empty()) return out;
  return out + " (requeued" + (why.rfind("; ", 0) == 0 ? "" : " ") + why + ")";
}

std::optional<Requeue> find_requeue(const RunShape& shape, const Job& job,
                                    const std::function<std::vector<Job>()>& earlier_attempts) {
  const std::string base = log_base(shape, job.id);
  int requeues = std::max(job.requeues, latest_logged_attempt(base));
  if (requeues <= 0) return std::nullopt;
  Requeue r;
  r.attempt = requeues + 1;
  if (shape.max_requeues > 0) r.of = shape.max_requeues + 1;
  // ddpctl's script requeued itself after the stop signal before the time limit.
  // Its node check or its watchdog say why after "): ".
  for (const auto& l : tail_lines(job_files::batch_err(base))) {
    // The script's words keep Slurm's "restart" for a requeue.
    size_t at = l.find(fmt::format("ddpctl: requeueing job {} (restart {} of", job.id, requeues));
    if (at == std::string::npos) continue;
    size_t why = l.find("): ", at);
    r.why = why == std::string::npos ? "at the time limit" : l.substr(why + 3);
  }
  std::vector<Job> earlier;
  if (r.why.empty() && earlier_attempts) earlier = earlier_attempts();
  if (r.why.empty() && !earlier.empty()) {
    const Job& last = earlier.back();
    switch (last.state) {
      case JobState::NodeFail: {
        // The node that failed, as srun saw it in the earlier attempts' lines.
        std::string node;
        static const Regex node_failure(R"(^srun: error: Node failure on (\S+))");
        for (const auto& l : tail_lines(job_files::batch_err(base))) {
          RegexMatch m;
          if (node_failure.search(l, &m)) node = m.str(1);
        }
        r.why = "after NODE_FAIL" + (!node.empty() ? " of " + node : last.nodes.empty() ? std::string() : " on " + last.nodes);
        break;
      }
      case JobState::Preempted:
        r.why = "after preemption";
        break;
      case JobState::Timeout:
        r.why = "at the time limit";
        break;
      default:
        r.why = "by scontrol requeue";
    }
  }
  // sacct is written by slurmdbd a little after the fact (seconds on a busy
  // cluster): the job was requeued all the same.
  if (r.why.empty() && earlier_attempts && earlier.empty()) r.why = "; sacct has no record of the earlier attempt yet";
  return r;
}

}  // namespace ddpctl
