#include "job_agent.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <csignal>
#include <cstdio>
#include <future>
#include <iostream>
#include <dirent.h>
#include <sys/stat.h>
#include <thread>

#include "files.hpp"
#include "jobs.hpp"
#include "node_check.hpp"
#include "shell.hpp"
#include "progress_pattern.hpp"
#include "text.hpp"
#include "sampler.hpp"
#include "usage.hpp"

namespace ddpctl {

namespace {

struct FileStat {
  long long size = -1;
  double mtime = 0;
};

FileStat file_stat(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return {static_cast<long long>(st.st_size),
          static_cast<double>(st.st_mtim.tv_sec) + static_cast<double>(st.st_mtim.tv_nsec) / 1e9};
}

}  // namespace

void revalidate_folder(const std::string& log_base) {
  size_t slash = log_base.rfind('/');
  if (DIR* d = ::opendir(slash == std::string::npos ? "." : log_base.substr(0, slash).c_str())) ::closedir(d);
}

StepObserver::StepObserver(const WatchOptions& o) : o_(o), seen_(static_cast<size_t>(std::max(0, o.tasks))) {}

Observation StepObserver::observe(double now) {
  Observation ob;
  ob.now = now;
  FileStat p = file_stat(o_.log_base + ".progress.json");
  if (p.size >= 0) ob.progress_mtime = p.mtime;
  // The latest sample of each node, when it is recent.
  // The recent samples only: a long job's files grow by megabytes a day.
  auto usage = read_usage(o_.log_base, o_.attempt, 64 << 10);
  for (int t = 0; t < o_.tasks; t++) {
    TaskObservation to;
    to.task = t;
    int node_index = o_.tasks_per_node > 0 ? t / o_.tasks_per_node : 0;
    if (node_index < static_cast<int>(o_.nodes.size())) to.node = o_.nodes[static_cast<size_t>(node_index)];
    if (o_.per_gpu) to.rank = t;
    std::string log = fmt::format("{}.restart{}.{}.out", o_.log_base, o_.attempt, t);
    FileStat f = file_stat(log);
    to.out_bytes = std::max(0LL, f.size);
    to.out_mtime = f.size > 0 ? f.mtime : 0;
    Seen& seen = seen_[static_cast<size_t>(t)];
    if (o_.progress && f.size != seen.size) {
      // The last 64 KiB hold the latest progress line.
      PatternReading r = read_with_pattern(*o_.progress, tail_lines(log, 64 << 10));
      if (r.matched && r.epoch) seen.progress = std::make_pair(*r.epoch, r.step.value_or(-1));
      seen.size = f.size;
    }
    to.progress = seen.progress;
    auto n = usage.find(to.node);
    if (n != usage.end() && !n->second.empty() && n->second.back().t >= now - 3 * o_.interval_s) {
      for (const auto& r : n->second.back().ranks) {
        bool same = o_.per_gpu ? (r.rank ? *r.rank == t : r.task == t) : r.task == t || (!r.task && r.rank);
        if (same && r.cpu_pct) to.cpu_pct = to.cpu_pct.value_or(0) + *r.cpu_pct;
      }
    }
    ob.tasks.push_back(to);
  }
  return ob;
}

Watcher::Watcher(WatchOptions o, CommandRunner& runner, double started_at)
    : o_(std::move(o)), runner_(runner), observer_(o_), watch_(o_.stall_after_s, started_at) {
  record_.attempt = o_.attempt;
  record_.stall_after_s = o_.stall_after_s;
  record_.action = stall_action_name(o_.action);
}

std::string stacks_path(const std::string& log_base, int attempt, const std::string& node) {
  return fmt::format("{}.restart{}.stacks.{}.txt", log_base, attempt, node);
}

std::string stacks_request_path(const std::string& log_base, int attempt) {
  return fmt::format("{}.restart{}.stacks-request", log_base, attempt);
}

bool Watcher::tick(double now) {
  StallVerdict v = watch_.observe(observer_.observe(now));
  if (!v.stalled) {
    if (stalled_) {
      stalled_ = false;
      record_.stalled = false;
      record_.resumed_at = now;
      write_file_atomic(stall_record_path(o_.log_base), stall_record_json(record_).dump() + "\n");
      std::cerr << fmt::format("ddpctl: watchdog: progress again after {}\n",
                               format_duration(std::llround(now - record_.since)));
    }
    return true;
  }
  if (stalled_) {  // still stalled (warn): keep the duration current
    record_.for_s = v.for_s;
    write_file_atomic(stall_record_path(o_.log_base), stall_record_json(record_).dump() + "\n");
    return true;
  }
  stalled_ = true;
  act(v, now);
  return o_.action == StallAction::Warn;
}

void Watcher::act(const StallVerdict& v, double now) {
  record_.stalled = true;
  record_.since = v.since;
  record_.detected_at = now;
  record_.for_s = v.for_s;
  record_.why = v.why;
  record_.basis = v.basis;
  record_.detail = v.detail;
  record_.stopped = v.stopped;
  record_.resumed_at.reset();
  StallAction action = o_.action;
  bool requeue = action == StallAction::Requeue && o_.attempt < o_.max_restarts;
  if (action == StallAction::Requeue && !requeue) action = StallAction::Cancel;
  if (action == StallAction::Warn) {
    record_.taken = "warned";
    write_file_atomic(stall_record_path(o_.log_base), stall_record_json(record_).dump() + "\n");
    std::cerr << "ddpctl: watchdog: warning: " << describe_stall(record_) << " (watchdog.action: warn: it runs on)\n";
    return;
  }
  // What every rank was doing, before they are killed: each node's sampler
  // dumps its node's ranks when the request file appears.
  record_.taken = requeue ? "requeuing" : "cancelling";
  write_file_atomic(stall_record_path(o_.log_base), stall_record_json(record_).dump() + "\n");
  // The samplers (one per node, inside the training step) dump the stacks
  // of their node's ranks when this file appears.
  write_file_atomic(stacks_request_path(o_.log_base, o_.attempt), fmt::format("{}\n", now));
  auto all_written = [&] {
    revalidate_folder(o_.log_base);
    for (const auto& n : o_.nodes)
      if (file_stat(stacks_path(o_.log_base, o_.attempt, n)).size <= 0) return false;
    return true;
  };
  for (double waited = 0; waited < o_.stacks_wait_s && !all_written(); waited += 0.25)
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  for (const auto& n : o_.nodes) {
    std::string path = stacks_path(o_.log_base, o_.attempt, n);
    if (file_stat(path).size > 0) record_.stacks.push_back(path);
  }
  if (record_.stacks.size() < o_.nodes.size())
    std::cerr << fmt::format("ddpctl: watchdog: stacks recorded on {} of {} node(s) within {:.0f}s\n",
                             record_.stacks.size(), o_.nodes.size(), o_.stacks_wait_s);
  std::string what = describe_stall(record_);
  if (requeue) {
    record_.taken = "requeued";
    write_file_atomic(stall_record_path(o_.log_base), stall_record_json(record_).dump() + "\n");
    std::cerr << fmt::format("ddpctl: requeueing job {} (restart {} of {}): by the watchdog: {}\n", o_.job_id,
                             o_.attempt + 1, o_.max_restarts, what);
    if (auto why = requeue_job(runner_, o_.job_id, {}))
      std::cerr << "ddpctl: watchdog: error: the requeue failed: " << *why << '\n';
    return;
  }
  record_.taken = "cancelled";
  write_file_atomic(stall_record_path(o_.log_base), stall_record_json(record_).dump() + "\n");
  std::cerr << fmt::format("ddpctl: watchdog: cancelling job {}: {}\n", o_.job_id, what);
  CommandResult c = runner_.run({"scancel", o_.job_id}, std::chrono::seconds(30));
  if (!c.ok()) std::cerr << "ddpctl: watchdog: error: scancel failed: " << c.describe() << '\n';
}

namespace {

// The bundled trainer's own words on where each worker is (SIGQUIT).
std::string trainer_states(const std::string& proc_root, const std::vector<ProcessUsage>& procs,
                           const std::string& log_base, const std::string& node) {
  if (log_base.empty() || proc_root != "/proc") return "";
  std::vector<std::pair<int, std::string>> asked;  // pid, its answer file
  for (const auto& p : procs) {
    std::string comm;
    try {
      comm = read_file(proc_root + "/" + std::to_string(p.pid) + "/comm", 256);
    } catch (const std::exception&) {
      continue;
    }
    if (comm != "ddp-train\n" || !p.rank) continue;
    std::string file = fmt::format("{}.state.{}.{}.txt", log_base, node, p.pid);
    std::remove(file.c_str());
    if (::kill(p.pid, SIGQUIT) == 0) asked.emplace_back(p.pid, file);
  }
  if (asked.empty()) return "";
  // A worker answers at once, even one stuck in a collective (the handler runs on any thread).
  for (int waited = 0; waited < 20; waited++) {
    bool all = std::all_of(asked.begin(), asked.end(), [](const auto& a) { return file_stat(a.second).size > 0; });
    if (all) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::string out = "\n## where the bundled trainer's workers say they are (SIGQUIT)\n";
  for (const auto& [pid, file] : asked) {
    std::string said;
    try {
      said = read_file(file, 4096);
    } catch (const std::exception&) {
    }
    out += said.empty() ? fmt::format("pid {}: no answer within 2 s\n", pid) : fmt::format("pid {}: {}", pid, said);
    std::remove(file.c_str());
  }
  return out;
}

}  // namespace

std::string dump_stacks(CommandRunner& runner, const std::string& proc_root, const std::string& job_id,
                        const std::string& node, double budget_s, const std::string& log_base) {
  JobProcessReader reader(proc_root, job_id, 100, 4096, node);
  std::vector<ProcessUsage> procs;
  for (const auto& p : reader.read())
    if (p.training) procs.push_back(p);
  std::string out = fmt::format("# stacks of job {}'s training processes on {}\n", job_id, node);
  if (procs.empty()) return out + "(no training process found)\n";
  out += trainer_states(proc_root, procs, log_base, node);
  // py-spy names Python frames; gdb shows native ones (the bundled trainer,
  // and a process py-spy cannot read). Probed once.
  bool py_spy = !runner.run({"py-spy", "--version"}, std::chrono::seconds(5)).not_found;
  bool gdb = !runner.run({"gdb", "--version"}, std::chrono::seconds(5)).not_found;
  if (!py_spy && !gdb) {
    for (const auto& p : procs)
      out += fmt::format("pid {} ({}{}), state {}: no py-spy or gdb on {}\n", p.pid, p.rank ? "rank " : "task ",
                         p.rank ? *p.rank : p.task.value_or(-1), p.state, node);
    return out;
  }
  auto ms = std::chrono::milliseconds(static_cast<long long>(budget_s * 1000));
  std::vector<std::future<CommandResult>> results;
  for (const auto& p : procs) {
    std::vector<std::string> spy = {"py-spy", "dump", "--pid", std::to_string(p.pid)};
    std::vector<std::string> bt = {"gdb", "-p", std::to_string(p.pid), "-batch", "-nx", "-ex", "thread apply all bt"};
    results.push_back(std::async(std::launch::async, [&runner, spy, bt, ms, py_spy, gdb] {
      if (!py_spy) return runner.run(bt, ms);
      CommandResult r = runner.run(spy, ms);
      return r.ok() || !gdb ? r : runner.run(bt, ms);
    }));
  }
  for (size_t i = 0; i < procs.size(); i++) {
    const auto& p = procs[i];
    CommandResult r = results[i].get();
    out += fmt::format("\n## pid {} ({} {}), state {}: {}\n", p.pid, p.rank ? "rank" : "task",
                       p.rank ? *p.rank : p.task.value_or(-1), p.state, shell_join(r.argv));
    out += r.out;
    if (!r.ok()) out += "(" + r.describe() + ")\n";
  }
  return out;
}

std::optional<std::string> requeue_job(CommandRunner& runner, const std::string& job_id,
                                       const std::vector<std::string>& exclude) {
  auto scontrol = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "scontrol");
    // Within Slurm's KillWait (30 s by default) for the whole sequence.
    return runner.run(args, std::chrono::seconds(8));
  };
  if (exclude.empty()) {
    CommandResult r = scontrol({"requeue", job_id});
    return r.ok() ? std::nullopt : std::optional<std::string>(r.describe());
  }
  CommandResult hold = scontrol({"requeuehold", job_id});
  if (!hold.ok()) {
    CommandResult r = scontrol({"requeue", job_id});
    return r.ok() ? std::optional<std::string>("the nodes could not be excluded (" + hold.describe() + ")")
                  : std::optional<std::string>(r.describe());
  }
  std::optional<std::string> problem = exclude_nodes(runner, job_id, exclude);
  CommandResult release = scontrol({"release", job_id});
  if (!release.ok()) release = scontrol({"release", job_id});
  if (!release.ok()) return "scontrol release failed: " + release.describe() + "; release the job by hand";
  return problem;
}

}  // namespace ddpctl
