#include "agent/job_watch.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <fmt/format.h>
#include <iostream>
#include <nlohmann/json.hpp>

#include "agent/in_job_restart.hpp"
#include "agent/job_acts.hpp"
#include "agent/job_place.hpp"
#include "agent/log_folder.hpp"
#include "agent/stall_evidence.hpp"
#include "base/files.hpp"
#include "base/text.hpp"
#include "base/values.hpp"
#include "runs/job_files.hpp"
#include "runs/job_states.hpp"
#include "runs/progress_read.hpp"
#include "runs/usage.hpp"

namespace ddpctl {

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
  slow_.events_to(o_.events);
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
    say_stalled();
    std::cerr << "ddpctl: watchdog: warning: " << describe_stall(record_) << " (watchdog.action: warn: it runs on)\n";
    return true;
  }
  requeue_ = o_.action == StallAction::Requeue && o_.attempt < o_.max_requeues;
  restart_ = o_.action == StallAction::Restart;
  // Before the act: what it is about to do (a record a crash leaves behind).
  record_.taken = watchdog_outcome(act_taken(), OutcomePhase::Acting);
  save();
  gather_stacks(now);
  say_stalled();
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

void Watcher::gather_stacks(double now) {
  if (gather_stall_evidence({o_.log_base, o_.attempt, o_.nodes, o_.stacks_wait_s, o_.fr_dump_prefix}, last_, clock_, now,
                            record_))
    save();
}

void Watcher::say_stalled() {
  nlohmann::json j = {{"reason", describe_stall(record_)}, {"action", record_.action}, {"for_s", record_.for_s}};
  if (record_.culprit_named) {
    j["culprit"] = record_.culprit;
    // "rank 1 (g1) ...": the culprit's rank, for programs.
    if (record_.culprit.rfind("rank ", 0) == 0) {
      const int rank = std::atoi(record_.culprit.c_str() + 5);
      if (rank > 0 || record_.culprit.compare(5, 1, "0") == 0) j["rank"] = rank;
    }
  }
  job_event(o_.events, EventType::Stalled, j);
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
                             o_.attempt + 1, o_.max_requeues, what);
    // With watchdog.exclude_slow, the slow ranks' nodes stay out of the next attempt.
    std::vector<std::string> exclude = slow_.exclusion();
    if (!exclude.empty()) std::cerr << fmt::format("ddpctl: watchdog: excluding {} (slow)\n", join(exclude, ", "));
    if (!o_.race_run.empty() && !raced_again_) {
      raced_again_ = true;
      if (auto why = race_again_before_requeue(runner_, o_.race_program, o_.race_run, o_.job_id,
                                               "by the watchdog: " + what, exclude))
        std::cerr << fmt::format("ddpctl: race: warning: the re-race failed here ({}); 'ddpctl race-again {}' on the "
                                 "login node does it\n", *why, o_.race_run);
    }
    failed = requeue_job(runner_, target, exclude);
    if (!failed)
      job_event(o_.events, EventType::Requeued, {{"reason", "by the watchdog: " + what}, {"nodes", exclude}});
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
  o.events = job_event_source(ctx.env);
  // The step's srun still there (it may be another user's pid only after it ended and the pid was reused: rare, and
  // then the batch shell's kill ends this).
  auto step_running = [pid = o.step_pid] { return pid <= 0 || ::kill(pid, 0) == 0 || errno == EPERM; };
  Watcher watcher(o, ctx.runner, ctx.clock, ctx.clock.wall());
  while (true) {
    ctx.clock.sleep(o.interval_s);
    if (!step_running() || !watcher.tick(ctx.clock.wall())) break;
  }
}

}  // namespace ddpctl
