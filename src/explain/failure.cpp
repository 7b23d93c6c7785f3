#include "explain/failure.hpp"

#include "runs/job_files.hpp"
#include "explain/container_failure.hpp"

#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <pwd.h>
#include <sstream>
#include <unistd.h>

#include "base/files.hpp"
#include "runs/in_job_record.hpp"
#include "base/regex.hpp"
#include "slurm/slurm.hpp"
#include "base/text.hpp"
#include "runs/usage.hpp"
#include "runs/stall_record.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

namespace {

std::string user_name(const std::string& uid) {
  if (uid.empty() || !std::all_of(uid.begin(), uid.end(), ::isdigit)) return uid;
#ifdef DDPCTL_STATIC
  // No name services in a static binary (slurm.hpp's current_user): the
  // uid, or this user's own name.
  if (static_cast<uid_t>(std::stoul(uid)) == getuid()) return current_user();
#else
  if (const passwd* pw = getpwuid(static_cast<uid_t>(std::stoul(uid)))) return pw->pw_name;
#endif
  return "uid " + uid;
}

// A job state that has a failure to explain.
bool failed_state(JobState s) {
  return s == JobState::Failed || s == JobState::NodeFail || s == JobState::OutOfMemory || s == JobState::Timeout ||
         s == JobState::Cancelled || s == JobState::Preempted || s == JobState::BootFail || s == JobState::Deadline;
}

// A job ended as a whole (time limit, scancel, preemption): its tasks were
// stopped, none failed, and Slurm's words say why.
bool ended_as_a_whole(JobState s) {
  return s == JobState::Timeout || s == JobState::Cancelled || s == JobState::Preempted || s == JobState::Deadline;
}

// The batch error log's lines of the latest attempt. With in-job restarts
// (restart:), of its latest training step: an earlier step's failure was
// restarted from, not the job's end.
std::vector<std::string> latest_step_lines(const std::string& base) {
  std::vector<std::string> batch = latest_attempt(tail_lines(job_files::batch_err(base)));
  for (size_t i = batch.size(); i-- > 0;)
    if (batch[i].rfind(kStepMarker, 0) == 0) {
      batch.erase(batch.begin(), batch.begin() + static_cast<long>(i) + 1);
      break;
    }
  return batch;
}

// The node check before training failed (the job agent, docs/running.md):
// no task ran the program; the check's own lines name the nodes.
bool node_check_failed(const std::vector<std::string>& batch, const std::string& base, Failure& f) {
  if (std::none_of(batch.begin(), batch.end(), [](const std::string& l) {
        return l.find("ddpctl: error: the node check failed") != std::string::npos;
      }))
    return false;
  static const Regex problem(R"(^ddpctl: node check: (node (\S+) .*))");
  for (const auto& l : batch) {
    RegexMatch m;
    if (!problem.search(l, &m)) continue;
    if (f.line.empty()) f.line = m.str(1), f.node = m.str(2);
  }
  f.what = f.node.empty() ? "failed the node check before training" : "failed the node check on " + f.node + " before training";
  f.log = job_files::batch_err(base);
  return true;
}

// Slurm's own words about the job, in the batch log: its what and line
// into `f`; the node srun saw fail, if any, returned.
std::string read_slurm_words(const std::vector<std::string>& batch, const Job& job, Failure& f) {
  static const Regex node_failure(R"(^srun: error: Node failure on (\S+))");
  std::string lost_node;
  for (const auto& l : batch) {
    RegexMatch m;
    // "slurmstepd: error: *** JOB 7 ON g1 CANCELLED AT ... DUE TO TIME LIMIT ***": from the stars on.
    auto stars = [&] { return trim(l.substr(std::min(l.size(), l.find("***")))); };
    if (l.find("DUE TO TIME LIMIT") != std::string::npos) {
      f.what = job.state == JobState::Timeout ? "reached its time limit (not requeued)" : "reached its time limit";
      f.line = stars();
    } else if (l.find("not requeueing job") != std::string::npos && l.find("max_restarts") != std::string::npos) {
      f.what = "stopped near its time limit and was not requeued (requeue.max_restarts reached)";
    } else if (l.find("DUE TO PREEMPTION") != std::string::npos) {
      f.what = "was preempted", f.line = stars();
    } else if (l.find("CANCELLED AT") != std::string::npos && l.find(" BY ") != std::string::npos) {
      f.line = stars();  // "*** JOB 7 ON g1 CANCELLED AT ... BY alice ***"
    } else if (l.find("oom_kill event") != std::string::npos || l.find("Exceeded job memory limit") != std::string::npos) {
      f.what = "ran out of memory", f.line = trim(l);
    }
    if (node_failure.search(l, &m) && lost_node.empty()) lost_node = m.str(1);
  }
  return lost_node;
}

// A lost node: the tasks elsewhere were only stopped because of it. srun's
// line names it, else for a NODE_FAIL the first of the job's nodes Slurm
// holds down or not responding.
bool lost_a_node(std::string lost_node, const Job& job, const std::vector<NodeInfo>& node_states,
                 const std::string& base, Failure& f) {
  if (lost_node.empty() && job.state == JobState::NodeFail)
    for (const auto& name : expand_hostlist(job.nodes))
      for (const auto& n : node_states)
        if (n.name == name && lost_node.empty() &&
            (n.state.find('*') != std::string::npos || n.state.find("DOWN") != std::string::npos ||
             n.state.find("down") != std::string::npos || n.state.find("NOT_RESPONDING") != std::string::npos))
          lost_node = name;
  if (lost_node.empty() && job.state != JobState::NodeFail) return false;
  f.node = lost_node;
  f.what = lost_node.empty() ? "lost a node" : "lost node " + lost_node + " (it stopped responding to Slurm)";
  for (const auto& n : node_states) {
    std::string state = n.state;
    for (char& c : state) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (n.name == lost_node && state.find("down") != std::string::npos)
      f.what = fmt::format("lost node {} (it stopped responding to Slurm, which marked it down)", lost_node);
  }
  f.log = job_files::batch_err(base);
  return true;
}

// The tasks srun saw fail, in order: "srun: error: g2: task 1: Exited with
// exit code 2", each a copy of `f` with its node, task and exit. `killed`
// gets, for each, whether a signal ended it after Slurm said it was ending
// the job (its "*** JOB 5 ON g1 CANCELLED AT ..." line): the end's, not its own.
std::vector<Failure> srun_task_failures(const std::vector<std::string>& batch, const Failure& f,
                                        std::vector<bool>* killed) {
  static const Regex srun_error(R"(^srun: error: (\S+): tasks? (\d{1,9})(?:-\d+)?: (.+)$)");
  static const Regex job_ended(R"(^slurmstepd(-\S+)?: error: \*\*\* JOB \S+ ON \S+ CANCELLED AT )");
  std::vector<Failure> tasks;
  bool ending = false;
  for (const auto& l : batch) {
    RegexMatch m;
    if (job_ended.search(l)) ending = true;
    if (!srun_error.full_match(l, &m)) continue;
    std::string how = m.str(3);
    if (how.find("Unable to") != std::string::npos || how.find("not responding") != std::string::npos) continue;
    int task = std::stoi(m.str(2));
    if (std::any_of(tasks.begin(), tasks.end(), [&](const Failure& t) { return *t.task == task; })) continue;
    Failure t = f;
    t.node = m.str(1);
    t.task = task;
    static const Regex exited(R"(Exited with exit code (\d{1,9})\b)");
    RegexMatch e;
    if (exited.search(how, &e))
      t.exit = ExitStatus{std::stoi(e.str(1)), std::nullopt};
    else if (auto sig = signal_named(trim(how)))
      t.exit = ExitStatus{std::nullopt, *sig};
    killed->push_back(ending && t.exit.signal && !t.exit.code);
    tasks.push_back(t);
  }
  return tasks;
}

// A failed task's step log: the line that says why, and the rank where it
// is known. Returns whether the task failed only as a consequence of
// another (a closed connection, srun's SIGTERM) or of Slurm ending the step
// (a cancel, the time limit: its slurmstepd says so in the log, and a task
// slow to end on SIGTERM is then killed).
bool read_task_log(const RunShape& shape, const std::string& base, int attempt, Failure& t) {
  std::string path = job_files::step_log(base, attempt, *t.task);
  std::vector<std::string> lines = tail_lines(path);
  t.log = path;
  if (shape.per_gpu || shape.ranks_per_node == 1) t.rank = *t.task;
  // The bundled trainer's launcher names the worker: "rank 3 (local rank 1, pid 77) was killed by ...".
  static const Regex launcher(R"(ddp-train: error: rank (\d{1,9}) \(local rank \d+, pid \d+\) (was killed by signal (\d{1,9})\b|exited with status (\d{1,9})\b))");
  for (const auto& l : lines) {
    RegexMatch m;
    if (!launcher.search(l, &m)) continue;
    t.rank = std::stoi(m.str(1));
    if (m.matched(3)) t.exit = ExitStatus{std::nullopt, std::stoi(m.str(3))};
    if (m.matched(4)) t.exit = ExitStatus{std::stoi(m.str(4)), std::nullopt};
    break;
  }
  TorchrunRootCause cause = read_torchrun_root_cause(lines);
  if (cause.rank) t.rank = cause.rank;
  if (!cause.node.empty()) t.node = cause.node;
  if (cause.exit) t.exit = *cause.exit;
  std::optional<int> local_rank = cause.local_rank;
  t.line = meaningful_line(lines, local_rank ? fmt::format("[default{}]:", *local_rank) : "");
  // The container runtime could not start the program (docs/containers.md).
  if (auto c = find_container_failure(lines)) t.what = c->what, t.line = c->line;
  static const Regex step_ended(R"(^slurmstepd(-\S+)?: error: \*\*\* STEP \S+ ON \S+ CANCELLED AT )");
  bool ended_by_slurm = std::any_of(lines.begin(), lines.end(), [](const std::string& l) { return step_ended.search(l); });
  return ended_by_slurm || failed_as_consequence(lines, t.line) || (t.exit.signal == SIGTERM && !t.exit.code);
}

// The task named: the first that failed on its own, else the first srun
// reported, unless the job ended as a whole; Slurm's words stand over the
// task's. Else the batch script's own last words (ddpctl's checks, a setup
// line).
void name_the_task(const RunShape& shape, const Job& job, int attempt, const std::vector<std::string>& batch,
                   const std::string& base, Failure& f) {
  std::optional<Failure> first, genuine;
  std::vector<bool> killed;
  std::vector<Failure> tasks = srun_task_failures(batch, f, &killed);
  for (size_t i = 0; i < tasks.size(); ++i) {
    Failure& t = tasks[i];
    bool consequence = read_task_log(shape, base, attempt, t) || killed[i];
    if (!first) first = t;
    if (!consequence) {
      genuine = t;
      break;
    }
  }
  if (genuine || (first && !ended_as_a_whole(job.state))) {
    std::string slurm_line = f.line, slurm_what = f.what;
    f = genuine ? *genuine : *first;
    if (!slurm_line.empty()) f.line = slurm_line;  // Slurm's OOM line says more than the program's last words
    if (!slurm_what.empty()) f.what = slurm_what;
    return;
  }
  if (f.line.empty()) {
    std::vector<std::string> own;
    for (const auto& l : batch)
      if (l.rfind("ddpctl: error: the training step exited", 0) != 0 && !is_noise(l)) own.push_back(l);
    f.line = meaningful_line(own);
  }
  f.log = job_files::batch_err(base);
}

// The job's end state in words, where the logs said nothing more precise.
std::string end_state_words(const Job& job, const ExitStatus& exit) {
  switch (job.state) {
    case JobState::Timeout:
      return "reached its time limit (not requeued)";
    case JobState::OutOfMemory:
      return "ran out of memory";
    case JobState::Preempted:
      return "was preempted";
    case JobState::Cancelled:
      return job.cancelled_by.empty() ? "was cancelled" : "was cancelled by " + user_name(job.cancelled_by);
    case JobState::BootFail:
      return "could not boot its nodes";
    case JobState::Deadline:
      return "missed its deadline";
    default: {
      std::string how = describe_exit(exit);
      return how.empty() ? "failed" : (exit.signal ? "was " + how : "exited with " + how);
    }
  }
}

// An OOM ending names the node whose processes held the most, from the
// job agent's samples (the last one before the kill is the closest).
void add_memory_peak(const std::string& base, int attempt, Failure& f) {
  const UsageSample* peak = nullptr;
  auto samples = read_usage(base, attempt);
  for (const auto& [node, v] : samples)
    for (const auto& smp : v)
      if (!peak || smp.rss_bytes > peak->rss_bytes) peak = &smp;
  if (!peak) return;
  long long limit = peak->mem_limit_bytes > 0 ? peak->mem_limit_bytes : peak->mem_total_bytes;
  f.what += fmt::format(" (peak RSS {} on {}{})", format_bytes(peak->rss_bytes), peak->node,
                        limit > 0 ? fmt::format(" of {} {}", format_bytes(limit),
                                                peak->mem_limit_bytes > 0 ? "allowed" : "on the node")
                                  : "");
  if (f.node.empty()) f.node = peak->node;
}

// The job agent's watchdog cancelled it (docs/running.md): the stall says
// why. "cancelling": the act ran, the record after it was not written.
void watchdog_cancel(const std::string& base, int attempt, Failure& f) {
  auto r = read_stall_record(base);
  if (!r || (r->taken != WatchdogOutcome::Cancelled && r->taken != WatchdogOutcome::Cancelling) ||
      r->attempt != attempt)
    return;
  f.what = "was cancelled by the watchdog";
  f.line = describe_stall(*r);
  f.log = stall_record_path(base);
  f.task.reset();
  f.rank.reset();
  f.node.clear();
}

}  // namespace

// Which explanation wins, highest first: the watchdog's cancel (over all
// else), the node check, a lost node, then the task named with Slurm's
// words over its own, a container that did not start, the end state;
// an OOM's peak goes after what.
std::optional<Failure> find_failure(const RunShape& shape, const Job& job, int attempt,
                                    const std::vector<NodeInfo>& node_states) {
  if (!failed_state(job.state)) return std::nullopt;
  Failure f;
  f.exit = job.exit;
  const std::string base = log_base(shape, job.id);
  if (attempt < 0) attempt = std::max(0, latest_logged_attempt(base));
  std::vector<std::string> batch = latest_step_lines(base);
  if (node_check_failed(batch, base, f)) return f;
  std::string lost_node = read_slurm_words(batch, job, f);
  if (lost_a_node(lost_node, job, node_states, base, f)) return f;
  name_the_task(shape, job, attempt, batch, base, f);
  // Pyxis and enroot say why a container did not start in srun's lines.
  if (f.what.empty())
    if (auto c = find_container_failure(batch)) f.what = c->what, f.line = c->line;
  if (f.what.empty()) f.what = end_state_words(job, f.exit);
  if (job.state == JobState::OutOfMemory) add_memory_peak(base, attempt, f);
  if (job.state == JobState::Cancelled) watchdog_cancel(base, attempt, f);
  return f;
}

std::optional<Failure> explain_failure(const RunShape& shape, const Job& job, SlurmClient& slurm) {
  std::vector<NodeInfo> nodes;
  if (job.state == JobState::NodeFail) nodes = slurm.nodes().nodes;
  if (job.state == JobState::Cancelled && job.cancelled_by.empty()) {
    Job known = job;
    for (const Job& j : slurm.accounting({job.id}).jobs)
      if (j.id == job.id) known.cancelled_by = j.cancelled_by;
    return find_failure(shape, known, -1, nodes);
  }
  return find_failure(shape, job, -1, nodes);
}

std::optional<Failure> explain_failure(const RunShape& shape, const Job& job, const JobStates& states,
                                       SlurmClient& slurm, std::optional<std::vector<NodeInfo>>* nodes) {
  if (auto e = states.ends.find(job.id); e != states.ends.end()) return find_failure(shape, job, -1, e->second.nodes);
  std::vector<NodeInfo> node_states;
  if (job.state == JobState::NodeFail) {
    std::optional<std::vector<NodeInfo>> once;
    if (!nodes) nodes = &once;
    if (!*nodes) *nodes = slurm.nodes().nodes;
    node_states = **nodes;
  }
  Job known = job;
  if (job.state == JobState::Cancelled && job.cancelled_by.empty() && !states.accounted.count(job.id))
    for (const Job& j : slurm.accounting({job.id}).jobs)
      if (j.id == job.id) known.cancelled_by = j.cancelled_by;
  return find_failure(shape, known, -1, node_states);
}

std::string describe_failure(const Failure& f) {
  std::string who;
  if (f.rank) who = fmt::format("rank {}", *f.rank);
  if (f.task && (!f.rank || *f.rank != *f.task))
    who += who.empty() ? fmt::format("task {}", *f.task) : fmt::format(" (task {})", *f.task);
  if (!f.node.empty() && f.what.find(f.node) == std::string::npos) who += (who.empty() ? "on " : " on ") + f.node;
  std::string out = who.empty() ? f.what : who + " " + f.what;
  if (!f.line.empty() && f.line != f.what) out += ": " + plain_line(f.line, 160);
  return out;
}

nlohmann::json failure_json(const Failure& f) {
  auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  return {{"rank", opt(f.rank)}, {"task", opt(f.task)}, {"node", f.node},   {"exit", opt(f.exit.code)},
          {"signal", opt(f.exit.signal)}, {"what", f.what}, {"line", f.line}, {"log", f.log}};
}

}  // namespace ddpctl
