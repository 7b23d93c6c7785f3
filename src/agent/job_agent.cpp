#include "agent/job_agent.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/culprit.hpp"
#include "agent/flight_recorder.hpp"
#include "agent/flight_recorder_pipe.hpp"
#include "runs/job_files.hpp"
#include "base/diagnostics.hpp"
#include "base/files.hpp"
#include "runs/jobs.hpp"
#include "base/shell.hpp"
#include "agent/stacks_hook.hpp"
#include "runs/progress_read.hpp"
#include "base/text.hpp"
#include "agent/sampler.hpp"
#include "runs/usage.hpp"
#include "base/values.hpp"

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

StepObserver::StepObserver(const WatchOptions& o) : o_(o), seen_(static_cast<size_t>(std::max(0, o.tasks))) {
  if (o_.step > 0)
    for (int t = 0; t < o_.tasks; t++)
      seen_[static_cast<size_t>(t)].from = std::max(0LL, file_stat(job_files::step_log(o_.log_base, o_.attempt, t)).size);
}

long long StepObserver::from(int task) const {
  return task >= 0 && task < static_cast<int>(seen_.size()) ? seen_[static_cast<size_t>(task)].from : 0;
}

Observation StepObserver::observe(double now) {
  Observation ob;
  ob.now = now;
  FileStat p = file_stat(job_files::progress(o_.log_base));
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
    std::string log = job_files::step_log(o_.log_base, o_.attempt, t);
    FileStat f = file_stat(log);
    to.out_bytes = std::max(0LL, f.size);
    to.out_mtime = f.size > 0 ? f.mtime : 0;
    Seen& seen = seen_[static_cast<size_t>(t)];
    if (o_.progress && f.size != seen.size) {
      // The last 64 KiB hold the latest progress line.
      PatternReading r = read_with_pattern(*o_.progress, tail_lines(log, 64 << 10, seen.from));
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

Watcher::Watcher(WatchOptions o, CommandRunner& runner, Clock& clock, double started_at)
    : o_(std::move(o)), runner_(runner), clock_(clock), observer_(o_), watch_(o_.stall_after_s, started_at),
      slow_({o_.log_base, o_.attempt, o_.nodes, o_.tasks, o_.tasks_per_node, o_.per_gpu, o_.interval_s,
             o_.slow_after_s, o_.exclude_slow},
            started_at) {
  started_at_ = started_at;
  resumed_noted_ = o_.step == 0;
  record_.attempt = o_.attempt;
  record_.step = o_.step;
  record_.stall_after_s = o_.stall_after_s;
  record_.action = stall_action_name(o_.action);
}

std::string stacks_path(const std::string& log_base, int attempt, const std::string& node) {
  return job_files::stacks(log_base, attempt, node);
}

std::string stacks_request_path(const std::string& log_base, int attempt) {
  return job_files::stacks_request(log_base, attempt);
}

void Watcher::save() {
  try {
    write_file_atomic(stall_record_path(o_.log_base), stall_record_json(record_).dump() + "\n");
  } catch (const std::exception& e) {
    std::cerr << "ddpctl: watchdog: error: the stall record could not be written (" << e.what()
              << "); the watchdog goes on\n";
  }
}

bool Watcher::tick(double now) {
  slow_.tick(now);
  last_ = observer_.observe(now);
  if (!resumed_noted_) note_resumed(now);
  StallVerdict v = watch_.observe(last_);
  if (o_.in_job) note_progress(v);
  if (tries_ > 0) {  // an act that failed: again, while the job is still stalled
    if (!v.stalled) tries_ = 0;
    else return !take_action();
  }
  if (!v.stalled) {
    if (stalled_) {
      stalled_ = false;
      record_.stalled = false;
      record_.resumed_at = now;
      save();
      std::cerr << fmt::format("ddpctl: watchdog: progress again after {}\n",
                               format_duration(std::llround(now - record_.since)));
    }
    return true;
  }
  if (stalled_) {  // still stalled (warn): keep the duration current
    record_.for_s = v.for_s;
    save();
    return true;
  }
  stalled_ = true;
  return act(v, now);
}

bool Watcher::act(const StallVerdict& v, double now) {
  record_.stalled = true;
  record_.since = v.since;
  record_.detected_at = now;
  record_.for_s = v.for_s;
  record_.why = v.why;
  record_.basis = v.basis;
  record_.detail = v.detail;
  record_.stopped = v.stopped;
  record_.resumed_at.reset();
  record_.result.clear();
  if (o_.action == StallAction::Warn) {
    record_.taken = WatchdogOutcome::Warned;
    save();
    std::cerr << "ddpctl: watchdog: warning: " << describe_stall(record_) << " (watchdog.action: warn: it runs on)\n";
    return true;
  }
  requeue_ = o_.action == StallAction::Requeue && o_.attempt < o_.max_restarts;
  restart_ = o_.action == StallAction::Restart;
  // Before the act: what it is about to do (a record a crash leaves behind).
  record_.taken = watchdog_outcome(act_taken(), OutcomePhase::Acting);
  save();
  gather_stacks(now);
  return !take_action();
}

void Watcher::note_resumed(double now) {
  std::optional<std::pair<double, long long>> at;
  // The bundled trainer's progress file, once this step has rewritten it
  // while training (not in its rendezvous, epoch 0 step 0).
  if (last_.progress_mtime && *last_.progress_mtime >= started_at_) {
    if (auto p = read_progress(job_files::progress(o_.log_base));
        p && (p->phase.empty() ? p->epoch > 0 : p->phase == "training"))
      at = std::make_pair(static_cast<double>(p->epoch), p->step);
  } else {
    for (const auto& t : last_.tasks)
      if (t.progress && (!at || *t.progress < *at)) at = t.progress;
  }
  if (!at) return;
  resumed_noted_ = true;
  nlohmann::json j = {{"epoch", at->first}, {"step", at->second}, {"at", now}};
  // The checkpoint the bundled trainer resumed (rank 0 says so in task 0's
  // log before it trains): "<path> at epoch 2, sample 0 of 1600 (written by 2 ranks, now 2)".
  constexpr std::string_view kResumed = "ddp-train: resumed from ";
  for (const auto& l : tail_lines(job_files::step_log(o_.log_base, o_.attempt, 0), 64 << 10, observer_.from(0)))
    if (l.rfind(kResumed, 0) == 0) j["from"] = plain_line(l.substr(kResumed.size(), l.find("; global batch") - kResumed.size()), 400);
  try {
    write_file_atomic(in_job_resumed_path(o_.log_base, o_.attempt, o_.step), j.dump() + "\n");
  } catch (const std::exception& e) {
    std::cerr << "ddpctl: watchdog: warning: where restart " << o_.step << " resumed is not recorded: " << e.what() << '\n';
  }
}

void Watcher::note_progress(const StallVerdict& v) {
  // Output or CPU time is no sign of training (ranks spin in a collective).
  if (v.basis != "the progress file" && v.basis != "the progress pattern") return;
  if (v.since <= started_at_ || v.since <= progress_noted_) return;
  progress_noted_ = v.since;
  try {
    write_file_atomic(in_job_progress_path(o_.log_base, o_.attempt, o_.step),
                      nlohmann::json({{"at", v.since}, {"basis", v.basis}}).dump() + "\n");
  } catch (const std::exception& e) {
    std::cerr << "ddpctl: watchdog: warning: step " << o_.step << "'s progress is not recorded: " << e.what() << '\n';
  }
}

// What every rank was doing, before they are killed: each node's sampler
// dumps its node's ranks when the request file appears.
void Watcher::gather_stacks(double now) {
  // The dumps already there: only one written after the ask counts.
  std::map<int, FileId> fr_before;
  if (!o_.fr_dump_prefix.empty()) fr_before = existing_dumps(o_.fr_dump_prefix);
  try {
    write_file_atomic(stacks_request_path(o_.log_base, o_.attempt), fmt::format("{}\n", now));
  } catch (const std::exception& e) {
    std::cerr << "ddpctl: watchdog: error: cannot ask for the stacks (" << e.what() << ")\n";
    return;
  }
  auto all_written = [&] {
    revalidate_folder(o_.log_base);
    for (const auto& n : o_.nodes)
      if (file_stat(stacks_path(o_.log_base, o_.attempt, n)).size <= 0) return false;
    return true;
  };
  double until = clock_.monotonic() + o_.stacks_wait_s;
  while (clock_.monotonic() < until && !all_written()) clock_.sleep(0.25);
  for (const auto& n : o_.nodes) {
    std::string path = stacks_path(o_.log_base, o_.attempt, n);
    if (file_stat(path).size > 0) record_.stacks.push_back(path);
  }
  if (record_.stacks.size() < o_.nodes.size())
    std::cerr << fmt::format("ddpctl: watchdog: stacks recorded on {} of {} node(s) within {:.0f}s\n",
                             record_.stacks.size(), o_.nodes.size(), o_.stacks_wait_s);
  // Who hung it, from the stacks; recorded before the act.
  std::vector<RankEvidence> ranks;
  for (const auto& node : o_.nodes) {
    std::string path = stacks_path(o_.log_base, o_.attempt, node);
    if (std::find(record_.stacks.begin(), record_.stacks.end(), path) == record_.stacks.end()) continue;
    try {
      for (auto& r : read_stacks_file(read_file(path, 16 << 20), node)) ranks.push_back(std::move(r));
    } catch (const std::exception& e) {
      std::cerr << "ddpctl: watchdog: error: cannot read " << path << " (" << e.what() << ")\n";
    }
  }
  for (auto& r : ranks)
    for (const auto& t : last_.tasks)
      if (t.node == r.node && (r.rank ? t.rank == r.rank : t.task == r.task)) r.cpu_pct = t.cpu_pct;
  std::optional<CulpritVerdict> c;
  if (!ranks.empty()) {
    c = decide_culprit(ranks);
    record_.culprit = c->text;
    record_.stacks_by = describe_stack_sources(ranks);
    record_.culprit_named = c->kind == CulpritKind::Named;
    if (record_.culprit_named) {
      record_.stopped.clear();
      for (const auto& r : c->culprits) record_.stopped.push_back({r.task, r.rank, r.node});
    }
  }
  gather_flight_recorder(fr_before, c ? &*c : nullptr);
  save();
}

void Watcher::gather_flight_recorder(const std::map<int, FileId>& before, const CulpritVerdict* stacks) {
  if (o_.fr_dump_prefix.empty()) return;
  std::vector<FrAsk> asks;
  for (const auto& node : o_.nodes) {
    std::string path = stacks_path(o_.log_base, o_.attempt, node);
    if (std::find(record_.stacks.begin(), record_.stacks.end(), path) == record_.stacks.end()) continue;
    try {
      for (auto& a : read_fr_asks(read_file(path, 16 << 20), node)) asks.push_back(a);
    } catch (const std::exception&) {
    }
  }
  std::map<int, std::string> nodes;
  std::vector<int> asked, not_asked;
  std::map<PipeAsk, std::vector<int>> by_outcome;
  for (const auto& a : asks) {
    nodes[a.rank] = a.node;
    (a.outcome == PipeAsk::Asked ? asked : not_asked).push_back(a.rank);
    by_outcome[a.outcome].push_back(a.rank);
  }
  if (asks.empty()) {
    record_.flight_recorder = "no rank was asked for a dump (no dump pipe to ask, or no node's agent answered)";
  } else if (asked.empty()) {
    std::vector<std::string> why;
    for (const auto& [outcome, ranks] : by_outcome) why.push_back(describe_rank_numbers(ranks, nodes) + ": " + pipe_ask_name(outcome));
    record_.flight_recorder =
        by_outcome.size() == 1 && by_outcome.count(PipeAsk::NoPipe)
            ? "no dumps: no rank has a dump pipe (its torch has no Flight Recorder, as 1.13, or no process group yet)"
            : "no dumps: " + join(why, "; ");
  } else {
    FrCollected got = collect_fr_dumps(o_.fr_dump_prefix, asked, before, clock_, kFlightRecorderWait);
    record_.flight_recorder_count = fmt::format("{} of {} ranks dumped", got.dumps.size(), asks.size());
    record_.flight_recorder_dumps = got.paths;
    std::vector<int> missing = got.missing;
    missing.insert(missing.end(), not_asked.begin(), not_asked.end());
    for (const auto& p : got.problems) std::cerr << "ddpctl: watchdog: flight recorder: " << p << "\n";
    if (got.dumps.empty()) {
      record_.flight_recorder = fmt::format("no dump within {:.0f}s of the ask", kFlightRecorderWait);
    } else {
      FrVerdict v = analyze_flight_recorder(got.dumps, missing, nodes);
      record_.flight_recorder = v.text;
      if (auto named = flight_recorder_culprit(stacks ? *stacks : CulpritVerdict{}, v, nodes)) {
        record_.flight_recorder_named = true;
        record_.stopped.clear();
        for (const auto& r : named->culprits) record_.stopped.push_back({r.task, r.rank, r.node});
      }
    }
  }
  std::string dir = o_.fr_dump_prefix.substr(0, o_.fr_dump_prefix.rfind('/') + 1);
  std::cerr << fmt::format("ddpctl: watchdog: flight recorder{}: {}{}\n",
                           record_.flight_recorder_count.empty() ? "" : ": " + record_.flight_recorder_count,
                           record_.flight_recorder, record_.flight_recorder_dumps.empty() ? "" : " (dumps in " + dir + ")");
}

bool Watcher::take_action() {
  constexpr int kTries = 3;
  tries_++;
  std::string what = describe_stall(record_);
  // Cancelling or requeueing the job signals its processes, this one too:
  // it writes what the act returned first (within Slurm's KillWait).
  auto term = std::signal(SIGTERM, SIG_IGN);
  const std::string& target = o_.slurm_id.empty() ? o_.job_id : o_.slurm_id;
  std::optional<std::string> failed;
  if (restart_) {
    // watchdog.action: restart: the step ends (its tasks killed); the batch
    // shell asks `job step-ended`, which reads this record: the culprit's
    // node is left out like a failed one.
    std::cerr << fmt::format("ddpctl: watchdog: ending the training step of job {} for an in-job restart: {}\n",
                             o_.job_id, what);
    std::string step;
    // An array task by <array>_<index> (the task running under the array's
    // own id would name every task's steps).
    failed = end_training_step(runner_, target, &step);
    record_.result = failed ? "ending the step failed: " + *failed : fmt::format("scancel --signal=KILL {}: done", step);
  } else if (requeue_) {
    std::cerr << fmt::format("ddpctl: requeueing job {} (restart {} of {}): by the watchdog: {}\n", o_.job_id,
                             o_.attempt + 1, o_.max_restarts, what);
    // With watchdog.exclude_slow, the slow ranks' nodes stay out of the next attempt.
    std::vector<std::string> exclude = slow_.exclusion();
    if (!exclude.empty()) std::cerr << fmt::format("ddpctl: watchdog: excluding {} (slow)\n", join(exclude, ", "));
    failed = requeue_job(runner_, target, exclude);
    record_.result = failed ? "scontrol requeue failed: " + *failed : fmt::format("scontrol requeue {}: done", target);
  } else {
    std::cerr << fmt::format("ddpctl: watchdog: cancelling job {}: {}\n", o_.job_id, what);
    CommandResult c = runner_.run({"scancel", target}, std::chrono::seconds(30));
    if (!c.ok()) failed = c.describe();
    record_.result = failed ? "scancel failed: " + *failed : fmt::format("scancel {}: done", target);
  }
  if (failed) {
    record_.taken = watchdog_outcome(act_taken(), OutcomePhase::Failed);
    std::cerr << fmt::format("ddpctl: watchdog: error: {}{}\n", record_.result,
                             tries_ < kTries ? "; trying again in an interval" : "; giving up");
  } else {
    record_.taken = watchdog_outcome(act_taken(), OutcomePhase::Done);
  }
  save();
  std::signal(SIGTERM, term);
  bool done = !failed || tries_ >= kTries;
  if (!failed) tries_ = 0;
  return done;
}

void run_watch(WatchOptions o, Context& ctx) {
  JobPlace place = job_place(ctx.env);
  o.job_id = place.job_id;
  o.slurm_id = place.slurm_id;
  o.attempt = place.attempt;
  // The in-job restart's step (launch.sh exports it before the watchdog starts).
  std::string problem;
  if (auto step = parse_int(ctx.env.value("DDPCTL_RESTART"), 0, 100, &problem)) {
    o.step = static_cast<int>(*step);
    o.in_job = true;
  }
  o.fr_dump_prefix = ctx.env.value("TORCH_FR_DUMP_TEMP_FILE", ctx.env.value("TORCH_NCCL_DEBUG_INFO_TEMP_FILE"));
  // The step's srun still there (it may be another user's pid only after it ended and the pid was reused: rare, and
  // then the batch shell's kill ends this).
  auto step_running = [pid = o.step_pid] { return pid <= 0 || ::kill(pid, 0) == 0 || errno == EPERM; };
  Watcher watcher(o, ctx.runner, ctx.clock, ctx.clock.wall());
  while (true) {
    ctx.clock.sleep(o.interval_s);
    if (!step_running() || !watcher.tick(ctx.clock.wall())) break;
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
  // A worker answers at once, even one stuck in a collective (the handler runs on any thread).
  for (int waited = 0; waited < 20; waited++) {
    bool all = std::all_of(asked.begin(), asked.end(), [](const auto& a) { return file_stat(a.second).size > 0; });
    if (all) break;
    clock.sleep(0.1);
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

std::string dump_stacks(CommandRunner& runner, Clock& clock, const std::string& proc_root, const JobMatch& job,
                        double budget_s, const std::string& log_base, const std::string& fr_pipe_stem) {
  const std::string &job_id = job.job_id, &node = job.node;
  JobProcessReader reader(proc_root, job, 100, 4096);
  std::vector<ProcessUsage> procs;
  for (const auto& p : reader.read())
    if (p.training) procs.push_back(p);
  std::string out = fmt::format("# stacks of job {}'s training processes on {}\n", job_id, node);
  if (procs.empty()) return out + "(no training process found)\n";
  if (!fr_pipe_stem.empty()) {
    // First, so that torch dumps while the stacks are taken.
    std::vector<FrAsk> asks;
    for (const auto& p : procs)
      if (p.rank && std::none_of(asks.begin(), asks.end(), [&](const FrAsk& a) { return a.rank == *p.rank; }))
        asks.push_back({*p.rank, ask_dump_pipe(fr_pipe_path(fr_pipe_stem, *p.rank)), node});
    out += fr_asks_section(fr_pipe_stem, asks);
  }
  double started = clock.monotonic();
  out += trainer_states(clock, proc_root, procs, log_base, node);
  // What each process is to the culprit decision: a rank (or a task); a
  // child of one (a DataLoader's worker: its parent has the same RANK), part
  // of that rank; or, where the ranks carry a RANK and it does not, the
  // launcher that started them (torchrun's agent), which is no rank.
  enum class Role { Rank, Child, Launcher };
  bool any_rank = std::any_of(procs.begin(), procs.end(), [](const ProcessUsage& p) { return p.rank.has_value(); });
  std::vector<Role> roles;
  std::vector<std::string> labels;
  for (const auto& p : procs) {
    auto parent = std::find_if(procs.begin(), procs.end(), [&](const ProcessUsage& q) { return q.pid == p.ppid; });
    bool child = parent != procs.end() && (p.rank ? parent->rank == p.rank : !parent->rank && parent->task == p.task);
    Role role = child ? Role::Child : !p.rank && any_rank ? Role::Launcher : Role::Rank;
    roles.push_back(role);
    labels.push_back(fmt::format("pid {} ({} {}{}), state {}", p.pid, p.rank ? "rank" : "task",
                                 p.rank ? *p.rank : p.task.value_or(-1),
                                 role == Role::Child      ? fmt::format(", child of pid {}", p.ppid)
                                 : role == Role::Launcher ? std::string(", launcher")
                                                          : std::string(),
                                 p.state));
  }
  // Python processes answer themselves (stacks_hook.hpp): nothing installed,
  // no ptrace. Only a registered process gets the signal; only on the real /proc.
  std::vector<int> pids;
  for (const auto& p : procs) pids.push_back(p.pid);
  bool real = proc_root == "/proc";
  std::vector<HookDump> asked = ask_python_stacks(proc_root, pids, clock, std::min(budget_s, 5.0),
                                                  [real](int pid, int sig) { return real && ::kill(pid, sig) == 0; });
  std::vector<std::string> sections(procs.size());
  // The tools: py-spy (Python frames) or gdb for a process that did not
  // answer, the launcher left out; and gdb's native frames besides a rank's
  // own Python ones where gdb is there (whether a rank in backward waits in
  // Gloo's or NCCL's all_reduce shows only there).
  enum class Tool { None, PySpyOrGdb, Gdb };
  std::vector<Tool> tools(procs.size(), Tool::None);
  for (size_t i = 0; i < procs.size(); i++) {
    bool dumped = asked[i].outcome == HookOutcome::Dumped;
    if (dumped) {
      sections[i] = fmt::format("\n## {}: {}\n{}", labels[i], describe_hook_dump(asked[i]), asked[i].text);
      if (!asked[i].text.empty() && asked[i].text.back() != '\n') sections[i] += '\n';
      if (roles[i] == Role::Rank) tools[i] = Tool::Gdb;
    } else if (roles[i] == Role::Launcher) {
      sections[i] = fmt::format("{}: not asked further, a launcher is no rank: {}\n", labels[i], describe_hook_dump(asked[i]));
    } else {
      tools[i] = Tool::PySpyOrGdb;
    }
  }
  bool need_py_spy = std::find(tools.begin(), tools.end(), Tool::PySpyOrGdb) != tools.end();
  bool need_gdb = need_py_spy || std::find(tools.begin(), tools.end(), Tool::Gdb) != tools.end();
  // Probed once; one that cannot say its version is not there. A node busy
  // with the hung job's spinning ranks can take seconds to start one: up to
  // half the budget, and a tool that does not answer is said, not dropped.
  auto probe_for = std::chrono::milliseconds(static_cast<long long>(std::max(5.0, budget_s / 2) * 1000));
  std::string unusable;
  auto probe = [&](const char* tool) {
    CommandResult r = runner.run({tool, "--version"}, probe_for);
    // Under load Debian's gdb 16 printed its version and then did not exit
    // for over 10 s: it is there, and runs.
    bool there = r.ok() || (r.timed_out && !trim(r.out).empty());
    if (!there && !r.not_found) unusable += fmt::format("({} not used on {}: {})\n", tool, node, r.describe());
    return there;
  };
  bool py_spy = need_py_spy && probe("py-spy");
  bool gdb = need_gdb && probe("gdb");
  out += unusable;
  for (size_t i = 0; i < procs.size(); i++)
    if (tools[i] == Tool::PySpyOrGdb && !py_spy && !gdb) {
      sections[i] = fmt::format("{}: no py-spy or gdb on {}, and {}\n", labels[i], node, describe_hook_dump(asked[i]));
      tools[i] = Tool::None;
    } else if (tools[i] == Tool::Gdb && !gdb) {
      tools[i] = Tool::None;
    }
  // What is left of the budget, at least a second.
  double left = std::max(1.0, budget_s - (clock.monotonic() - started));
  auto ms = std::chrono::milliseconds(static_cast<long long>(left * 1000));
  std::vector<std::pair<size_t, std::future<CommandResult>>> results;
  for (size_t i = 0; i < procs.size(); i++) {
    if (tools[i] == Tool::None) continue;
    std::string pid = std::to_string(procs[i].pid);
    std::vector<std::string> spy = {"py-spy", "dump", "--pid", pid};
    std::vector<std::string> bt = {"gdb", "-p", pid, "-batch", "-nx", "-ex", "thread apply all bt"};
    bool try_spy = tools[i] == Tool::PySpyOrGdb && py_spy;
    results.emplace_back(i, std::async(std::launch::async, [&runner, spy, bt, ms, try_spy, gdb] {
                           if (!try_spy) return runner.run(bt, ms);
                           CommandResult r = runner.run(spy, ms);
                           return r.ok() || !gdb ? r : runner.run(bt, ms);
                         }));
  }
  for (auto& [i, result] : results) {
    CommandResult r = result.get();
    std::string& s = sections[i];
    s += fmt::format("\n## {}: {}\n", labels[i], shell_join(r.argv)) + r.out;
    if (!r.out.empty() && r.out.back() != '\n') s += '\n';
    if (!r.ok()) s += "(" + r.describe() + ")\n";
  }
  for (const auto& s : sections) out += s;
  return out;
}

JobPlace job_place(const Environment& env) {
  JobPlace p;
  p.job_id = env.value("SLURM_JOB_ID");
  if (p.job_id.empty())
    throw UserError(Location{"SLURM_JOB_ID"}, "", "ddpctl job runs inside a Slurm job (SLURM_JOB_ID is not set)");
  p.slurm_id = p.job_id;
  if (std::string array = env.value("SLURM_ARRAY_JOB_ID"), task = env.value("SLURM_ARRAY_TASK_ID");
      !array.empty() && !task.empty())
    p.slurm_id = array + "_" + task;
  p.node = env.value("SLURMD_NODENAME", env.hostname());
  p.cluster = env.value("SLURM_CLUSTER_NAME");
  p.conf = env.value("SLURM_CONF");
  auto number = [&](const char* name) {
    std::string problem;
    return parse_int(env.value(name), 0, 1LL << 40, &problem).value_or(0);
  };
  p.attempt = static_cast<int>(number("SLURM_RESTART_COUNT"));
  p.cpus = static_cast<int>(number("SLURM_CPUS_ON_NODE"));
  p.gpus = static_cast<int>(number("SLURM_GPUS_ON_NODE"));
  p.mem_mib = number("SLURM_MEM_PER_NODE");
  p.gpu_indices = parse_gpu_list(env.value("SLURM_STEP_GPUS", env.value("SLURM_JOB_GPUS")));
  return p;
}

std::vector<int> parse_gpu_list(const std::string& s) {
  std::vector<int> out;
  std::string problem;
  for (const auto& part : split(s, ',')) {
    size_t dash = part.find('-');
    if (dash != std::string::npos) {
      auto a = parse_int(part.substr(0, dash), 0, 4096, &problem), b = parse_int(part.substr(dash + 1), 0, 4096, &problem);
      if (a && b)
        for (long long i = *a; i <= *b; i++) out.push_back(static_cast<int>(i));
    } else if (auto v = parse_int(part, 0, 4096, &problem)) {
      out.push_back(static_cast<int>(*v));
    }
  }
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

double agent_seconds(const std::string& s, const std::string& option) {
  std::string problem;
  if (auto v = parse_span(s, &problem)) return static_cast<double>(*v);
  throw UserError(Location{option}, "", fmt::format("{} is not a duration (30s, 10m, 1h)", printable(s)));
}

void run_sampler(const SampleOptions& o, Context& ctx) {
  JobPlace place = job_place(ctx.env);
  Sampler::Options so;
  so.proc_root = o.proc_root;
  so.node = place.node;
  so.job_id = place.job_id;
  so.cluster = place.cluster;
  so.conf = place.conf;
  so.attempt = place.attempt;
  so.cpus = place.cpus;
  so.ticks_per_s = o.ticks_per_s;
  so.page_size = o.page_size;
  so.gpu_indices = place.gpu_indices;
  so.mem_limit_bytes = place.mem_mib * 1024 * 1024;
  Sampler sampler(so, ctx.runner);
  std::string path = usage_path(o.log_base, so.node);
  std::string request = stacks_request_path(o.log_base, so.attempt);
  std::string stacks = stacks_path(o.log_base, so.attempt, so.node);
  double budget = stacks_budget(ctx.env);
  double next = 0;
  for (int taken = 0; o.count == 0 || taken < o.count;) {
    if (o.parent_pid > 0 && ::getppid() != o.parent_pid) return;  // the program it sampled for has ended
    double now = ctx.clock.wall();
    if (now >= next) {
      UsageSample s = sampler.take(now);
      std::ofstream out(path, std::ios::app);
      out << usage_sample_json(s).dump() << '\n';
      if (!out.flush()) throw UserError(Location{path}, "", "cannot append the sample");
      next = now + o.interval_s;
      taken++;
      revalidate_folder(o.log_base);  // on NFS: see the watchdog's request file soon
    }
    // The watchdog asks for the ranks' stacks before it cancels or requeues.
    if (::access(request.c_str(), F_OK) == 0 && ::access(stacks.c_str(), F_OK) != 0)
      write_file_atomic(stacks, dump_stacks(ctx.runner, ctx.clock, o.proc_root, {so.job_id, so.node, so.cluster, so.conf}, budget, o.log_base,
                                            ctx.env.value("TORCH_NCCL_DEBUG_INFO_PIPE_FILE")));
    if (o.count == 0 || taken < o.count) ctx.clock.sleep(0.5);
  }
}

NodeCheckResult run_node_check(const NodeCheckRequest& q, Context& ctx) {
  JobPlace place = job_place(ctx.env);
  NodeCheckOptions n;
  n.node = place.node;
  n.listen = n.node == q.master_host;
  n.master_addr = q.master_addr;
  n.master_host = q.master_host;
  n.master_port = q.nodes > 1 ? q.master_port : 0;
  n.interface = q.interface;
  n.peers = q.nodes - 1;
  int gpus = q.gpus >= 0 ? q.gpus : place.gpus;
  if (gpus > 0) n.expected_gpus = gpus;
  // Half the job's memory: MemAvailable never reaches a whole-node request
  // (the kernel and slurmd hold some), while what an earlier job's stray
  // processes still hold usually takes far more.
  n.min_free_mib = q.min_free_mib >= 0 ? q.min_free_mib : place.mem_mib > 0 ? place.mem_mib / 2 : 256;
  n.deadline_s = q.deadline_s;
  n.proc_root = q.proc_root;
  NodeCheckResult r = check_node(n, ctx.runner, ctx.clock);
  write_file_atomic(node_check_path(q.log_base, place.attempt, n.node), node_check_json(r).dump() + "\n");
  return r;
}

CheckDecision read_node_checks(const std::string& log_base, const std::vector<std::string>& nodes, int max_restarts,
                               Context& ctx) {
  int attempt = job_place(ctx.env).attempt;
  std::vector<std::optional<NodeCheckResult>> results;
  for (const auto& n : nodes) {
    std::optional<NodeCheckResult> r;
    try {
      r = parse_node_check(read_file(node_check_path(log_base, attempt, n)));
    } catch (const std::exception&) {
    }
    results.push_back(r);
  }
  return decide_after_check(nodes, results, attempt, max_restarts);
}

namespace {

// A record that cannot be written is said, never stands between the decision and the act.
void save_in_job_record(const std::string& log_base, const InJobRecord& r) {
  try {
    write_file_atomic(in_job_record_path(log_base, r.attempt), in_job_record_json(r).dump(2) + "\n");
  } catch (const std::exception& e) {
    std::cerr << "ddpctl: in-job restart: warning: cannot record it: " << e.what() << '\n';
  }
}

}  // namespace

RestartDecision on_step_ended(const StepEndedOptions& o, Context& ctx) {
  JobPlace place = job_place(ctx.env);
  RestartInput in;
  in.nodes = o.nodes;
  in.spares = o.spares;
  in.restarts_done = o.restarts_done;
  in.max_in_job = o.max_in_job;
  in.full_nodes = o.full_nodes;
  in.min_nodes = o.min_nodes;
  in.attempt = place.attempt;
  in.max_requeues = o.max_requeues;
  in.tasks_are_ranks = o.tasks_are_ranks;
  in.step_rc = o.step_rc;
  revalidate_folder(o.log_base);
  try {
    in.failures = parse_step_end(tail_lines(job_files::batch_err(o.log_base), 1 << 20));
  } catch (const std::exception& e) {
    std::cerr << "ddpctl: in-job restart: warning: cannot read the batch log: " << e.what() << '\n';
  }
  if (o.check_failed) in.check_failed = read_node_checks(o.log_base, o.nodes, 0, ctx).bad_nodes;
  if (auto stall = read_stall_record(o.log_base); stall && stall->attempt == place.attempt) {
    if (outcome_action(stall->taken) == StallAction::Restart) {
      // watchdog.action restart ended this step (not an earlier one's record).
      if (stall->step == o.restarts_done && outcome_phase(stall->taken) != OutcomePhase::Failed) {
        std::string who = stall->culprit_named ? stall->culprit : stall->detail.empty() ? "no rank stands out" : stall->detail;
        in.watchdog_stall = fmt::format("stalled {}: {}", format_duration(std::llround(stall->for_s)), who);
        for (const auto& t : stall->stopped) in.watchdog_nodes.push_back(t.node);
      }
    } else {
      in.watchdog_taken = stall->taken;
    }
  }
  if (auto slow = read_slow_record(o.log_base); slow && slow->attempt == place.attempt && slow->exclude)
    in.slow_nodes = slow->exclude_nodes;
  std::vector<std::string> all = o.nodes;
  all.insert(all.end(), o.spares.begin(), o.spares.end());
  CommandResult show = ctx.runner.run({"scontrol", "show", "node", "-o", join(all, ",")}, std::chrono::seconds(30));
  // scontrol names every node it knows even when it exits non-zero for one it does not.
  in.node_states = parse_node_states(show.out);
  if (!show.ok())
    std::cerr << "ddpctl: in-job restart: warning: the nodes' states are not all known: " << show.describe() << '\n';
  RestartDecision d = decide_restart(in);

  InJobRecord rec = read_in_job_record(o.log_base, place.attempt).value_or(InJobRecord{});
  rec.attempt = place.attempt;
  rec.of = o.max_in_job;
  if (o.full_nodes > 0) rec.full_nodes = o.full_nodes;
  if (d.verdict == AgentVerdict::Go) {
    InJobRestart x;
    x.number = o.restarts_done + 1;
    x.kind = d.kind;
    x.cause = d.cause;
    x.text = d.text;
    x.failed = d.failed;
    x.left_out = d.left_out;
    x.taken = d.taken;
    x.nodes = d.nodes;
    x.step_rc = o.step_rc;
    x.decided_at = ctx.clock.wall();
    if (auto at = read_in_job_progress(o.log_base, place.attempt, o.restarts_done); at && *at <= x.decided_at)
      x.last_progress_at = *at;
    rec.restarts.push_back(x);
  } else {
    rec.fallback = d.verdict == AgentVerdict::Requeue ? "requeue" : "fail";
    rec.fallback_why = d.text;
  }
  save_in_job_record(o.log_base, rec);
  if (d.verdict == AgentVerdict::Go)
    for (const auto& n : d.nodes) std::remove(node_check_path(o.log_base, place.attempt, n).c_str());
  return d;
}

void on_step_started(const std::string& log_base, int number, Context& ctx) {
  JobPlace place = job_place(ctx.env);
  auto rec = read_in_job_record(log_base, place.attempt);
  if (!rec || number < 1 || number > static_cast<int>(rec->restarts.size()))
    throw UserError(Location{in_job_record_path(log_base, place.attempt)}, "",
                    fmt::format("has no in-job restart {}", number));
  rec->restarts[static_cast<size_t>(number - 1)].started_at = ctx.clock.wall();
  save_in_job_record(log_base, *rec);
}

std::string record_stacks(const std::string& log_base, const std::string& proc_root, double budget_s, Context& ctx) {
  JobPlace place = job_place(ctx.env);
  std::string path = stacks_path(log_base, place.attempt, place.node);
  write_file_atomic(path, dump_stacks(ctx.runner, ctx.clock, proc_root, {place.job_id, place.node, place.cluster, place.conf}, budget_s, log_base,
                                      ctx.env.value("TORCH_NCCL_DEBUG_INFO_PIPE_FILE")));
  return path;
}

JobEnvironment record_environment(const std::string& log_base, const EnvironmentOptions& o, Context& ctx) {
  JobEnvironment e = collect_environment(o, ctx.runner, ctx.env, ctx.clock);
  write_file_atomic(environment_path(log_base, e.attempt), environment_json(e).dump(2) + "\n");
  return e;
}

std::string newest_step(const std::string& squeue_steps) {
  std::string best;
  long best_n = -1;
  for (const auto& line : split(squeue_steps, '\n')) {
    std::string id = trim(line);
    size_t dot = id.rfind('.');
    if (dot == std::string::npos || dot + 1 >= id.size()) continue;
    std::string n = id.substr(dot + 1);
    if (!std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; }) || n.size() > 9) continue;
    if (long v = std::stol(n); v > best_n) best_n = v, best = id;
  }
  return best;
}

std::optional<std::string> end_training_step(CommandRunner& runner, const std::string& job_id, std::string* step) {
  CommandResult q = runner.run({"squeue", "-h", "-s", "-j", job_id, "-o", "%i"}, std::chrono::seconds(20));
  if (!q.ok()) return "squeue -s: " + q.describe();
  *step = newest_step(q.out);
  if (step->empty()) return fmt::format("squeue -s lists no step of job {}", job_id);
  CommandResult c = runner.run({"scancel", "--signal=KILL", *step}, std::chrono::seconds(30));
  if (!c.ok()) return "scancel --signal=KILL " + *step + ": " + c.describe();
  return std::nullopt;
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
