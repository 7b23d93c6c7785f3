#include "runs/job_states.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <optional>

#include "runs/job_files.hpp"
#include "base/files.hpp"
#include "runs/ledger.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace {

// The records sacct gave of one job id, in its order: the latest is the
// current attempt (the latest submitted: a requeue submits it again); the
// earlier ones with the same name and comment (ddpctl's token) are its
// earlier attempts. Another job that once had the same id (a cluster whose
// ids started again) is neither.
struct AccountedJob {
  Job latest;
  std::vector<Job> earlier;
};

std::map<std::string, AccountedJob> by_job(const std::vector<Job>& records) {
  std::map<std::string, std::vector<const Job*>> grouped;
  for (const auto& j : records) grouped[j.id].push_back(&j);
  std::map<std::string, AccountedJob> out;
  for (auto& [id, list] : grouped) {
    std::stable_sort(list.begin(), list.end(), [](const Job* a, const Job* b) {
      return a->submit_time.value_or(0) < b->submit_time.value_or(0);
    });
    AccountedJob a;
    a.latest = *list.back();
    // A RESIZING record is the same attempt before it lost a node (a job
    // with --no-kill, restart:'s), not an earlier attempt.
    for (size_t i = 0; i + 1 < list.size(); ++i)
      if (list[i]->name == a.latest.name && list[i]->comment == a.latest.comment && list[i]->state != JobState::Resizing)
        a.earlier.push_back(*list[i]);
    // sacct has no requeue count; its records of the job do.
    a.latest.requeues = static_cast<int>(a.earlier.size());
    out[id] = std::move(a);
  }
  return out;
}

}  // namespace

JobStates lookup_jobs(SlurmClient& slurm, const std::vector<std::string>& ids) {
  JobStates out;
  if (ids.empty()) return out;
  JobQuery queue = slurm.jobs(ids);
  out.queue_answered = queue.answered;
  std::vector<std::string> missing;
  std::map<std::string, const Job*> seen;  // in squeue, asked of sacct for its exit code or who cancelled it
  std::map<std::string, const Job*> listed;
  if (queue.answered)
    for (const auto& job : queue.jobs) listed[job.id] = &job;
  std::set<std::string> missing_set;
  for (const auto& id : ids) {
    if (out.jobs.count(id) || missing_set.count(id)) continue;
    auto it = listed.find(id);
    const Job* found = it == listed.end() ? nullptr : it->second;
    // An ended job squeue still lists: sacct adds what squeue does not say
    // (the exit code on the format string path, who cancelled it), in the
    // same one call as the jobs squeue forgot.
    bool ask = found && is_terminal(found->state) &&
               (!queue.has_exit_codes || (found->state == JobState::Cancelled && found->cancelled_by.empty()));
    if (found && !ask) {
      out.jobs[id] = *found;
    } else {
      missing.push_back(id);
      missing_set.insert(id);
      if (found) seen[id] = found;
    }
  }
  if (missing.empty()) return out;
  if (!queue.answered) out.error = queue.error;
  // One sacct for every job of this refresh, whatever the number of runs.
  JobQuery acct_query = slurm.attempts(missing);
  std::map<std::string, AccountedJob> acct;
  if (acct_query.answered) acct = by_job(acct_query.jobs);
  for (const auto& id : missing) {
    Job job;
    job.id = id;
    auto known = acct.find(id);
    if (acct_query.answered) out.accounted.insert(id);
    if (seen.count(id)) {
      // Ended, and still in squeue (so it may yet be requeued): sacct adds
      // how it exited and who cancelled it, when it says the same state.
      job = *seen[id];
      if (known != acct.end() && known->second.latest.state == job.state) {
        if (!queue.has_exit_codes) job.exit = known->second.latest.exit;
        if (job.cancelled_by.empty()) job.cancelled_by = known->second.latest.cancelled_by;
      }
    } else if (acct_query.answered) {
      if (known == acct.end()) {
        job.reason = queue.answered ? "neither squeue nor sacct knows this job" : "Slurm did not answer";
      } else if (!queue.answered && !is_terminal(known->second.latest.state)) {
        // Accounting's word is final only for jobs that ended; for a live job
        // only the controller knows, and it did not answer.
        job = known->second.latest;
        job.reason = job.state == JobState::Unknown
                         ? "Slurm did not answer"
                         : std::string("the controller did not answer; accounting last saw it ") + state_name(job.state);
        job.state = JobState::Unknown;
      } else {
        job = known->second.latest;
        out.earlier[id] = known->second.earlier;
        // squeue answered without it: no requeue can bring it back.
        if (queue.answered && is_terminal(job.state)) out.final.insert(id);
      }
    } else {
      job.reason = queue.answered ? "no longer in squeue, and sacct cannot say how it ended"
                                  : "Slurm did not answer";
      if (out.error.empty()) out.error = acct_query.error;
    }
    out.jobs[id] = job;
  }
  return out;
}

namespace {

// A NODE_FAIL end keeps the states of the nodes it lost, from one sinfo for
// all the ends of one lookup (`nodes`: asked at the first). False where they
// could not be read: that end is not recorded, and Slurm is asked again next
// time.
bool keep_lost_nodes(SlurmClient& slurm, JobEnd& end, std::optional<std::vector<NodeInfo>>& nodes,
                     std::vector<std::string>& notes) {
  if (end.job.state != JobState::NodeFail || end.job.nodes.empty()) return true;
  if (!nodes) {
    NodeQuery q = slurm.nodes();
    nodes.emplace();
    if (!q.answered) {
      notes.push_back("the states of the nodes that NODE_FAIL jobs lost could not be read (" + q.error +
                      "); they are asked again next time");
      return false;
    }
    *nodes = q.nodes;
  }
  if (nodes->empty()) return false;
  for (const auto& name : expand_hostlist(end.job.nodes))
    for (const auto& n : *nodes)
      if (n.name == name) {
        NodeInfo kept;
        kept.name = n.name;
        kept.state = n.state;
        end.nodes.push_back(kept);
      }
  return true;
}

}  // namespace

JobStates lookup_run_jobs(SlurmClient& slurm, std::vector<Run>& runs, const std::vector<std::string>& ids,
                          long long now) {
  JobStates out;
  std::map<std::string, std::pair<size_t, const Attempt*>> attempt_of;  // job id -> its run (index) and attempt
  for (size_t i = 0; i < runs.size(); ++i)
    for (const auto& a : runs[i].attempts)
      if (!a.job_id.empty()) attempt_of.emplace(a.job_id, std::make_pair(i, &a));
  std::map<std::string, size_t> run_of;  // job id -> index in runs, for jobs of a run
  std::vector<std::string> ask;
  std::set<std::string> asked_once;
  for (const auto& id : ids) {
    if (out.jobs.count(id) || asked_once.count(id)) continue;
    const Attempt* attempt = nullptr;
    if (auto it = attempt_of.find(id); it != attempt_of.end()) {
      run_of[id] = it->second.first;
      attempt = it->second.second;
    }
    if (attempt && attempt->end) {
      out.ends[id] = *attempt->end;
      out.jobs[id] = attempt->end->job;
      out.jobs[id].source = "ledger";
    } else {
      ask.push_back(id);
      asked_once.insert(id);
    }
  }
  out.queue_answered = true;  // nothing to ask is no failure to answer
  if (ask.empty()) return out;
  JobStates asked = lookup_jobs(slurm, ask);
  out.queue_answered = asked.queue_answered;
  out.error = asked.error;
  out.accounted = asked.accounted;
  out.earlier = asked.earlier;
  out.jobs.insert(asked.jobs.begin(), asked.jobs.end());

  // The ends read for the first time, with what explaining them asks of
  // Slurm: the earlier attempts came with sacct's answer; a NODE_FAIL's
  // node states take one sinfo for all of them.
  std::optional<std::vector<NodeInfo>> nodes;  // asked once, at the first NODE_FAIL
  std::map<size_t, std::map<std::string, JobEnd>> news;  // by run
  for (const auto& id : asked.final) {
    auto r = run_of.find(id);
    if (r == run_of.end()) continue;  // a job of no run: nowhere to keep it
    JobEnd end;
    end.job = asked.jobs.at(id);
    end.earlier = asked.earlier[id];
    end.recorded_at = now;
    if (!keep_lost_nodes(slurm, end, nodes, out.notes)) continue;
    out.ends[id] = end;
    news[r->second][id] = end;
  }
  for (auto& [i, ends] : news) {
    try {
      record_job_ends(runs[i], ends);
    } catch (const std::exception& e) {
      // Shown all the same; only asked again next time.
      out.notes.push_back(fmt::format("run {}: cannot record how its jobs ended ({}); Slurm is asked again next time",
                                      runs[i].id, e.what()));
    }
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
    p.phase = j.value("phase", std::string());
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
