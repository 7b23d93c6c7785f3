#include "explain/requeue.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "base/files.hpp"
#include "base/regex.hpp"
#include "base/text.hpp"
#include "runs/job_files.hpp"
#include "runs/task_logs.hpp"

namespace ddpctl {

std::string Requeue::describe() const {
  std::string out = of ? fmt::format("attempt {} of {}", attempt, *of) : fmt::format("attempt {}", attempt);
  if (why.empty() && details.empty()) return out;
  std::string more;
  for (const auto& d : details) more += "; " + d;
  return out + " (requeued" + (why.empty() || why.rfind("; ", 0) == 0 ? "" : " ") + why + more + ")";
}

namespace {

// The last number after `prefix` on a line of `path` that starts with it.
std::optional<long long> last_number_after(const std::string& path, const std::string& prefix) {
  std::optional<long long> found;
  for (const auto& l : tail_lines(path)) {
    if (l.rfind(prefix, 0) != 0) continue;
    size_t end = prefix.size();
    while (end < l.size() && end < prefix.size() + 18 && l[end] >= '0' && l[end] <= '9') ++end;
    if (end > prefix.size()) found = std::stoll(l.substr(prefix.size(), end - prefix.size()));
  }
  return found;
}

}  // namespace

std::string resumed_steps(const std::string& base, int attempt) {
  if (attempt < 1) return "";
  auto resumed = last_number_after(job_files::step_log(base, attempt, 0), "ddp-train: schedule: global step ");
  if (!resumed) return "";
  auto stopped = last_number_after(job_files::step_log(base, attempt - 1, 0), "ddp-train: stopped at global step ");
  if (!stopped) return fmt::format("resumed from global step {}", *resumed);
  long long lost = std::max(0LL, *stopped - *resumed);
  return fmt::format("resumed from global step {} ({})", *resumed,
                     lost == 0 ? std::string("no step lost") : fmt::format("{} step{} lost", lost, lost == 1 ? "" : "s"));
}

namespace {

// What the script said of requeue `k` (its line "requeueing job N (restart
// k of M)..."), else how sacct says the attempt ended.
std::string why_of(const std::vector<std::string>& err, const std::string& job_id, int k, const Job* ended) {
  const std::string said = fmt::format("ddpctl: requeueing job {} (restart {} of", job_id, k);
  std::string why;
  for (const auto& l : err) {
    size_t at = l.find(said);
    if (at == std::string::npos) continue;
    size_t w = l.find("): ", at);
    why = w == std::string::npos ? "at the time limit" : l.substr(w + 3);
  }
  if (!why.empty() || !ended) return why;
  switch (ended->state) {
    case JobState::NodeFail: return "after NODE_FAIL";
    case JobState::Preempted: return "after preemption";
    case JobState::Timeout: return "at the time limit";
    default: return "by scontrol requeue";
  }
}

}  // namespace

RequeueHistory requeue_history(const RunShape& shape, const Job& latest, const std::vector<Job>& earlier) {
  RequeueHistory h;
  const std::string base = log_base(shape, latest.id);
  const int requeues = std::max({latest.requeues, latest_logged_attempt(base), static_cast<int>(earlier.size())});
  const std::vector<std::string> err = tail_lines(job_files::batch_err(base));
  for (int k = 1; k <= requeues; ++k) {
    const Job* ended = k - 1 < static_cast<int>(earlier.size()) ? &earlier[k - 1] : nullptr;
    const Job* next = k < static_cast<int>(earlier.size()) ? &earlier[k] : &latest;
    std::string why = why_of(err, latest.id, k, ended);
    if (why.rfind("after preemption", 0) == 0) ++h.preemptions;
    std::string line = fmt::format("attempt {}: {}", k + 1, why.empty() ? std::string("requeued") : why);
    if (ended && ended->start_time && ended->end_time && *ended->end_time >= *ended->start_time)
      h.ran_s += static_cast<double>(*ended->end_time - *ended->start_time);
    if (ended && ended->end_time && next->start_time && *next->start_time >= *ended->end_time) {
      double lost = static_cast<double>(*next->start_time - *ended->end_time);
      h.lost_s += lost;
      line += "; " + format_duration(lost) + " from its stop to the next start";
    }
    if (std::string steps = resumed_steps(base, k); !steps.empty()) line += "; " + steps;
    h.requeues.push_back(line);
  }
  return h;
}

std::optional<Requeue> find_requeue(const RunShape& shape, const Job& job,
                                    const std::function<std::vector<Job>()>& earlier_attempts,
                                    const PreemptorOf& preemptor) {
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
  // A preemption: who took the nodes, after how long.
  if (r.why.rfind("after preemption", 0) == 0) {
    if (earlier.empty() && earlier_attempts) earlier = earlier_attempts();
    if (!earlier.empty()) {
      const Job& last = earlier.back();
      std::string by = preemptor ? preemptor(last) : "";
      std::string said = "preempted" + (by.empty() ? std::string() : " by " + by);
      if (last.start_time && last.end_time && *last.end_time >= *last.start_time)
        said += " after " + format_duration(static_cast<double>(*last.end_time - *last.start_time));
      if (said != "preempted") r.details.push_back(said);
    }
  }
  if (std::string steps = resumed_steps(base, requeues); !steps.empty()) r.details.push_back(steps);
  return r;
}

}  // namespace ddpctl
