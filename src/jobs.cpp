#include "jobs.hpp"

#include <cmath>
#include <ctime>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "job_files.hpp"
#include "files.hpp"

namespace ddpctl {

JobStates lookup_jobs(SlurmClient& slurm, const std::vector<std::string>& ids) {
  JobStates out;
  if (ids.empty()) return out;
  JobQuery queue = slurm.jobs(ids);
  out.queue_answered = queue.answered;
  std::vector<std::string> missing;
  std::map<std::string, const Job*> seen;  // in squeue, asked of sacct for its exit code
  for (const auto& id : ids) {
    const Job* found = nullptr;
    if (queue.answered)
      for (const auto& job : queue.jobs)
        if (job.id == id) found = &job;
    if (found && (queue.has_exit_codes || !is_terminal(found->state))) {
      out.jobs[id] = *found;
    } else {
      missing.push_back(id);
      if (found) seen[id] = found;
    }
  }
  if (missing.empty()) return out;
  if (!queue.answered) out.error = queue.error;
  JobQuery acct = slurm.accounting(missing);
  for (const auto& id : missing) {
    Job job;
    job.id = id;
    if (seen.count(id)) {
      // Ended, read from squeue's format string: sacct adds how it exited.
      job = *seen[id];
      if (acct.answered)
        for (const auto& j : acct.jobs)
          if (j.id == id && j.state == job.state) job.exit = j.exit;
    } else if (acct.answered) {
      bool known = false;
      for (const auto& j : acct.jobs)
        if (j.id == id) job = j, known = true;
      if (!known) {
        job.reason = queue.answered ? "neither squeue nor sacct knows this job" : "Slurm did not answer";
      } else if (!queue.answered && !is_terminal(job.state)) {
        // Accounting's word is final only for jobs that ended; for a live job
        // only the controller knows, and it did not answer.
        job.reason = job.state == JobState::Unknown
                         ? "Slurm did not answer"
                         : std::string("the controller did not answer; accounting last saw it ") + state_name(job.state);
        job.state = JobState::Unknown;
      }
    } else {
      job.reason = queue.answered ? "no longer in squeue, and sacct cannot say how it ended"
                                  : "Slurm did not answer";
      if (out.error.empty()) out.error = acct.error;
    }
    out.jobs[id] = job;
  }
  return out;
}

bool EndWatcher::ended(const Job& job) {
  if (!is_terminal(job.state)) {
    seen_ = false;
    return false;
  }
  double now = clock_.monotonic();
  if (!seen_) {
    seen_ = true;
    since_ = now;
  }
  // A requeue passes through FAILED or CANCELLED while the old step is killed
  // (up to Slurm's KillWait, 30 s by default), then the job is PENDING again.
  bool may_requeue = job.state == JobState::Failed || job.state == JobState::Cancelled ||
                     job.state == JobState::NodeFail || job.state == JobState::Preempted;
  return now - since_ >= (may_requeue ? 10 : 1);
}

std::string progress_path(const std::string& output_dir, const std::string& job_name, const std::string& job_id) {
  return job_files::progress(job_files::log_base(output_dir, job_name, job_id));
}

std::optional<Progress> read_progress(const std::string& path) {
  try {
    auto j = nlohmann::json::parse(read_file(path, 64 << 10));
    Progress p;
    p.epoch = j.value("epoch", 0);
    p.epochs = j.value("epochs", 0);
    p.step = j.value("step", 0LL);
    p.steps = j.value("steps", 0LL);
    p.samples_per_s = j.value("samples_per_s", 0.0);
    p.eta_s = j.value("eta_s", -1.0);
    p.updated = j.value("updated", 0LL);
    return p;
  } catch (const std::exception&) {
    return std::nullopt;  // not written yet, or being replaced
  }
}

std::string clock_time(long long t) {
  char buf[32];
  std::time_t tt = static_cast<std::time_t>(t);
  std::strftime(buf, sizeof buf, "%H:%M:%S", std::localtime(&tt));
  return buf;
}

std::string format_progress(const Progress& p, int bar_width) {
  std::string out;
  if (p.epochs > 0) out += fmt::format("epoch {}/{} ", p.epoch, p.epochs);
  else if (p.epoch > 0) out += fmt::format("epoch {} ", p.epoch);
  if (p.steps > 0) {
    double frac = std::clamp(static_cast<double>(p.step) / static_cast<double>(p.steps), 0.0, 1.0);
    int filled = static_cast<int>(std::lround(frac * bar_width));
    out += "[" + std::string(filled, '#') + std::string(bar_width - filled, '-') + "] ";
    out += p.percent ? fmt::format("{:.0f}% ", frac * 100) : fmt::format("{}/{} ", p.step, p.steps);
  }
  if (p.loss) out += fmt::format("loss {:.4g} ", *p.loss);
  if (p.samples_per_s > 0) out += fmt::format("{:.0f} img/s ", p.samples_per_s);
  else if (p.it_per_s > 0) out += fmt::format("{:.2f} it/s ", p.it_per_s);
  if (p.eta_s >= 0) out += "ETA " + format_duration(static_cast<long long>(p.eta_s));
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace ddpctl
