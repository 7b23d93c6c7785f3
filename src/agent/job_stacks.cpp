#include "agent/job_stacks.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fmt/format.h>
#include <future>
#include <iostream>

#include "agent/flight_recorder_pipe.hpp"
#include "agent/job_place.hpp"
#include "agent/log_folder.hpp"
#include "agent/stacks_hook.hpp"
#include "base/files.hpp"
#include "base/shell.hpp"
#include "base/text.hpp"
#include "base/values.hpp"
#include "runs/job_files.hpp"

namespace ddpctl {

std::string stacks_path(const std::string& log_base, int attempt, const std::string& node) {
  return job_files::stacks(log_base, attempt, node);
}

std::string stacks_request_path(const std::string& log_base, int attempt) {
  return job_files::stacks_request(log_base, attempt);
}

std::vector<std::string> await_trainer_answers(Clock& clock, const std::vector<std::string>& files, double wait_s) {
  auto read = [](const std::string& file) {
    try {
      return read_file(file, 4096);
    } catch (const std::exception&) {
      return std::string();
    }
  };
  std::vector<std::string> out(files.size());
  double until = clock.monotonic() + wait_s;
  while (true) {
    for (size_t i = 0; i < files.size(); i++) out[i] = read(files[i]);
    bool all = std::all_of(out.begin(), out.end(), [](const std::string& t) { return !t.empty() && t.back() == '\n'; });
    if (all || clock.monotonic() >= until) return out;
    clock.sleep(0.1);
  }
}

namespace {

// The bundled trainer's own words on where each worker is (SIGQUIT).
std::string trainer_states(Clock& clock, const std::string& proc_root, const std::vector<ProcessUsage>& procs,
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
    std::string file = job_files::state_dump(log_base, node, p.pid);
    std::remove(file.c_str());
    if (::kill(p.pid, SIGQUIT) == 0) asked.emplace_back(p.pid, file);
  }
  if (asked.empty()) return "";
  std::vector<std::string> files;
  for (const auto& a : asked) files.push_back(a.second);
  std::vector<std::string> said = await_trainer_answers(clock, files, 2);
  std::string out = "\n## where the bundled trainer's workers say they are (SIGQUIT)\n";
  for (size_t i = 0; i < asked.size(); i++) {
    const std::string& text = said[i];
    int pid = asked[i].first;
    if (text.empty()) out += fmt::format("pid {}: no answer within 2 s\n", pid);
    else if (text.back() != '\n') out += fmt::format("pid {}: {} (cut: its end not written within 2 s)\n", pid, text);
    else out += fmt::format("pid {}: {}", pid, text);
    std::remove(asked[i].second.c_str());
  }
  return out;
}

// Every rank's Flight Recorder asked for a dump through its pipe, once a rank.
std::string ask_flight_recorders(const std::vector<ProcessUsage>& procs, const std::string& fr_pipe_stem,
                                 const std::string& node) {
  std::vector<FrAsk> asks;
  for (const auto& p : procs)
    if (p.rank && std::none_of(asks.begin(), asks.end(), [&](const FrAsk& a) { return a.rank == *p.rank; }))
      asks.push_back({*p.rank, ask_dump_pipe(fr_pipe_path(fr_pipe_stem, *p.rank)), node});
  return fr_asks_section(fr_pipe_stem, asks);
}

// What each process is to the culprit decision: a rank (or a task); a
// child of one (a DataLoader's worker: its parent has the same RANK), part
// of that rank; or, where the ranks carry a RANK and it does not, the
// launcher that started them (torchrun's agent), which is no rank.
enum class Role { Rank, Child, Launcher };
// The tools: py-spy (Python frames) or gdb for a process that did not
// answer, the launcher left out; and gdb's native frames besides a rank's
// own Python ones where gdb is there (whether a rank in backward waits in
// Gloo's or NCCL's all_reduce shows only there).
enum class Tool { None, PySpyOrGdb, Gdb };

// One training process of the node and its part of the stacks file.
struct Dumped {
  ProcessUsage proc;
  Role role = Role::Rank;
  std::string label;    // "pid 812 (rank 1), state S"
  HookDump asked;       // its own Python hook's answer
  Tool tool = Tool::None;
  std::string section;  // its text in the file
};

std::vector<Dumped> label_processes(const std::vector<ProcessUsage>& procs) {
  bool any_rank = std::any_of(procs.begin(), procs.end(), [](const ProcessUsage& p) { return p.rank.has_value(); });
  std::vector<Dumped> out;
  for (const auto& p : procs) {
    auto parent = std::find_if(procs.begin(), procs.end(), [&](const ProcessUsage& q) { return q.pid == p.ppid; });
    bool child = parent != procs.end() && (p.rank ? parent->rank == p.rank : !parent->rank && parent->task == p.task);
    Role role = child ? Role::Child : !p.rank && any_rank ? Role::Launcher : Role::Rank;
    Dumped d;
    d.proc = p;
    d.role = role;
    d.label = fmt::format("pid {} ({} {}{}), state {}", p.pid, p.rank ? "rank" : "task",
                          p.rank ? *p.rank : p.task.value_or(-1),
                          role == Role::Child      ? fmt::format(", child of pid {}", p.ppid)
                          : role == Role::Launcher ? std::string(", launcher")
                                                   : std::string(),
                          p.state);
    out.push_back(d);
  }
  return out;
}

// Python processes answer themselves (stacks_hook.hpp): nothing installed,
// no ptrace. Only a registered process gets the signal; only on the real
// /proc. What each answer leaves to the tools.
void ask_python_hooks(std::vector<Dumped>& procs, const std::string& proc_root, Clock& clock, double budget_s,
                      const SignalSender& send) {
  std::vector<int> pids;
  for (const auto& d : procs) pids.push_back(d.proc.pid);
  bool real = proc_root == "/proc";
  SignalSender kill_real = [real](int pid, int sig) { return real && ::kill(pid, sig) == 0; };
  std::vector<HookDump> asked = ask_python_stacks(proc_root, pids, clock, std::min(budget_s, 5.0), send ? send : kill_real);
  for (size_t i = 0; i < procs.size(); i++) {
    Dumped& d = procs[i];
    d.asked = asked[i];
    if (d.asked.outcome == HookOutcome::Dumped) {
      d.section = fmt::format("\n## {}: {}\n{}", d.label, describe_hook_dump(d.asked), d.asked.text);
      if (!d.asked.text.empty() && d.asked.text.back() != '\n') d.section += '\n';
      if (d.role == Role::Rank) d.tool = Tool::Gdb;
    } else if (d.role == Role::Launcher) {
      d.section = fmt::format("{}: not asked further, a launcher is no rank: {}\n", d.label, describe_hook_dump(d.asked));
    } else {
      d.tool = Tool::PySpyOrGdb;
    }
  }
}

struct ToolsThere {
  bool py_spy = false, gdb = false;
  std::string unusable;  // "(gdb not used on g1: ...)" lines
};

// Probed once; one that cannot say its version is not there. A node busy
// with the hung job's spinning ranks can take seconds to start one: up to
// half the budget, and a tool that does not answer is said, not dropped.
ToolsThere probe_tools(CommandRunner& runner, const std::vector<Dumped>& procs, double budget_s,
                       const std::string& node) {
  auto needs = [&](Tool t) { return std::any_of(procs.begin(), procs.end(), [t](const Dumped& d) { return d.tool == t; }); };
  bool need_py_spy = needs(Tool::PySpyOrGdb);
  bool need_gdb = need_py_spy || needs(Tool::Gdb);
  auto probe_for = std::chrono::milliseconds(static_cast<long long>(std::max(5.0, budget_s / 2) * 1000));
  ToolsThere there;
  auto probe = [&](const char* tool) {
    CommandResult r = runner.run({tool, "--version"}, probe_for);
    // Under load Debian's gdb 16 printed its version and then did not exit
    // for over 10 s: it is there, and runs.
    bool ok = r.ok() || (r.timed_out && !trim(r.out).empty());
    if (!ok && !r.not_found) there.unusable += fmt::format("({} not used on {}: {})\n", tool, node, r.describe());
    return ok;
  };
  there.py_spy = need_py_spy && probe("py-spy");
  there.gdb = need_gdb && probe("gdb");
  return there;
}

// The tools' dumps, of every process at once, within `ms` each.
void run_tools(CommandRunner& runner, std::vector<Dumped>& procs, const ToolsThere& there,
               std::chrono::milliseconds ms) {
  std::vector<std::pair<size_t, std::future<CommandResult>>> results;
  bool gdb = there.gdb;
  for (size_t i = 0; i < procs.size(); i++) {
    if (procs[i].tool == Tool::None) continue;
    std::string pid = std::to_string(procs[i].proc.pid);
    std::vector<std::string> spy = {"py-spy", "dump", "--pid", pid};
    std::vector<std::string> bt = {"gdb", "-p", pid, "-batch", "-nx", "-ex", "thread apply all bt"};
    bool try_spy = procs[i].tool == Tool::PySpyOrGdb && there.py_spy;
    results.emplace_back(i, std::async(std::launch::async, [&runner, spy, bt, ms, try_spy, gdb] {
                           if (!try_spy) return runner.run(bt, ms);
                           CommandResult r = runner.run(spy, ms);
                           return r.ok() || !gdb ? r : runner.run(bt, ms);
                         }));
  }
  for (auto& [i, result] : results) {
    CommandResult r = result.get();
    std::string& s = procs[i].section;
    s += fmt::format("\n## {}: {}\n", procs[i].label, shell_join(r.argv)) + r.out;
    if (!r.out.empty() && r.out.back() != '\n') s += '\n';
    if (!r.ok()) s += "(" + r.describe() + ")\n";
  }
}

}  // namespace

std::string dump_stacks(CommandRunner& runner, Clock& clock, const std::string& proc_root, const JobMatch& job,
                        double budget_s, const std::string& log_base, const std::string& fr_pipe_stem,
                        const SignalSender& send) {
  const std::string &job_id = job.job_id, &node = job.node;
  JobProcessReader reader(proc_root, job, 100, 4096);
  std::vector<ProcessUsage> training;
  for (const auto& p : reader.read())
    if (p.training) training.push_back(p);
  std::string out = fmt::format("# stacks of job {}'s training processes on {}\n", job_id, node);
  if (training.empty()) return out + "(no training process found)\n";
  double started = clock.monotonic();
  std::string states = trainer_states(clock, proc_root, training, log_base, node);
  std::vector<Dumped> procs = label_processes(training);
  ask_python_hooks(procs, proc_root, clock, budget_s, send);
  // Once the faulthandler dumps are in: a Gloo rank's dump is made by the
  // hook's Python thread, and faulthandler, walking every thread's frames
  // from its signal handler, can crash on a thread that runs Python meanwhile
  // (CPython #116008). The one rank seen to die of SIGSEGV while its stacks
  // were taken (Python 3.14, torch 2.14, under CI's load) had been asked
  // both at once, and an earlier dump showed that thread allocating.
  // Before py-spy and gdb, so that torch dumps while they take their time.
  if (!fr_pipe_stem.empty()) out += ask_flight_recorders(training, fr_pipe_stem, node);
  out += states;
  ToolsThere there = probe_tools(runner, procs, budget_s, node);
  out += there.unusable;
  for (auto& d : procs)
    if (d.tool == Tool::PySpyOrGdb && !there.py_spy && !there.gdb) {
      d.section = fmt::format("{}: no py-spy or gdb on {}, and {}\n", d.label, node, describe_hook_dump(d.asked));
      d.tool = Tool::None;
    } else if (d.tool == Tool::Gdb && !there.gdb) {
      d.tool = Tool::None;
    }
  // What is left of the budget, at least a second.
  double left = std::max(1.0, budget_s - (clock.monotonic() - started));
  run_tools(runner, procs, there, std::chrono::milliseconds(static_cast<long long>(left * 1000)));
  for (const auto& d : procs) out += d.section;
  return out;
}

double stacks_budget(const Environment& env) {
  std::string v = env.value("DDPCTL_STACKS_BUDGET");
  if (v.empty()) return kStacksBudgetS;
  std::string problem;
  if (auto s = parse_span(v, &problem); s && *s > 0) return static_cast<double>(*s);
  std::cerr << fmt::format("ddpctl: job: DDPCTL_STACKS_BUDGET={} is not a duration (30s, 2m); the stacks get {:g} s\n",
                           printable(v), kStacksBudgetS);
  return kStacksBudgetS;
}

std::string record_stacks(const std::string& log_base, const std::string& proc_root, double budget_s, Context& ctx) {
  JobPlace place = job_place(ctx.env);
  std::string path = stacks_path(log_base, place.attempt, place.node);
  write_file_atomic(path, dump_stacks(ctx.runner, ctx.clock, proc_root, {place.job_id, place.node, place.cluster, place.conf}, budget_s, log_base,
                                      ctx.env.value("TORCH_NCCL_DEBUG_INFO_PIPE_FILE")));
  return path;
}

}  // namespace ddpctl
