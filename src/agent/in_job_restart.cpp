#include "agent/in_job_restart.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>

#include "base/files.hpp"
#include "runs/job_files.hpp"
#include "base/regex.hpp"
#include "runs/task_logs.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}
void add(std::vector<std::string>& v, const std::string& s) {
  if (!s.empty() && !contains(v, s)) v.push_back(s);
}

const std::vector<std::pair<StepFailureKind, const char*>>& kind_names() {
  static const std::vector<std::pair<StepFailureKind, const char*>> names = {
      {StepFailureKind::TaskExited, "task-exited"}, {StepFailureKind::TaskKilled, "task-killed"},
      {StepFailureKind::NodeLost, "node-lost"},     {StepFailureKind::NodeCheck, "node-check"},
      {StepFailureKind::Stalled, "stalled"},        {StepFailureKind::Unknown, "unknown"}};
  return names;
}

std::string task_words(const StepFailure& f, bool tasks_are_ranks) {
  if (!f.task) return "a task";
  return (tasks_are_ranks ? "rank " : "task ") + std::to_string(*f.task);
}

}  // namespace

std::string step_failure_kind_name(StepFailureKind k) {
  for (const auto& [kind, name] : kind_names())
    if (kind == k) return name;
  return "unknown";
}

StepFailureKind parse_step_failure_kind(const std::string& s) {
  for (const auto& [kind, name] : kind_names())
    if (s == name) return kind;
  return StepFailureKind::Unknown;
}

std::vector<StepFailure> parse_step_end(const std::vector<std::string>& lines) {
  size_t from = 0;
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].rfind(kStepMarker, 0) == 0) from = i + 1;
  static const Regex node_failure(R"(^srun: error: Node failure on (\S+))");
  static const Regex task_error(R"(^srun: error: (\S+): tasks? (\d{1,9})(?:-\d+)?: (.+)$)");
  static const Regex exited(R"(Exited with exit code (\d{1,9})\b)");
  std::vector<StepFailure> out;
  for (size_t i = from; i < lines.size(); ++i) {
    RegexMatch m;
    if (node_failure.search(lines[i], &m)) {
      StepFailure f;
      f.kind = StepFailureKind::NodeLost;
      f.node = m.str(1);
      out.push_back(f);
      continue;
    }
    if (!task_error.full_match(lines[i], &m)) continue;
    std::string how = m.str(3);
    StepFailure f;
    f.node = m.str(1);
    f.task = std::stoi(m.str(2));
    RegexMatch e;
    if (exited.search(how, &e)) {
      f.kind = StepFailureKind::TaskExited;
      f.code = std::stoi(e.str(1));
    } else if (auto sig = signal_named(trim(how))) {
      f.kind = StepFailureKind::TaskKilled;
      f.signal = *sig;
    } else {
      continue;  // "Unable to create step", "not responding": about srun, not a task's end
    }
    out.push_back(f);
  }
  return out;
}

std::map<std::string, std::string> parse_node_states(const std::string& show) {
  std::map<std::string, std::string> out;
  static const Regex name(R"((?:^|\s)NodeName=(\S+))"), state(R"((?:^|\s)State=(\S+))");
  for (const auto& line : split(show, '\n')) {
    RegexMatch n, s;
    if (name.search(line, &n) && state.search(line, &s)) out[n.str(1)] = s.str(1);
  }
  return out;
}

bool node_state_unhealthy(const std::string& state) {
  std::string s = state;
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (s.find('*') != std::string::npos) return true;  // not responding
  for (const char* bad : {"DOWN", "DRAIN", "FAIL", "NOT_RESPONDING", "POWER_DOWN", "POWERED_DOWN", "REBOOT"})
    if (s.find(bad) != std::string::npos) return true;
  return false;
}

RestartDecision decide_restart(const RestartInput& in) {
  RestartDecision d;
  // The watchdog ended the job itself (watchdog.action cancel or requeue):
  // Slurm is taking the job away, and a new step would race it.
  // Whatever became of the act (before it, done or failed), as before.
  StallAction taken_act = outcome_action(in.watchdog_taken);
  if (taken_act == StallAction::Cancel || taken_act == StallAction::Requeue) {
    bool cancel = taken_act == StallAction::Cancel;
    d.verdict = AgentVerdict::Fail;
    d.cause = cancel ? "the watchdog cancelled the job" : "the watchdog requeued the job";
    d.text = d.cause + "; no in-job restart";
    return d;
  }
  auto unhealthy = [&](const std::string& node) {
    auto it = in.node_states.find(node);
    return it != in.node_states.end() && node_state_unhealthy(it->second);
  };
  // The nodes no step may run on again in this job: lost, failing Slurm's
  // view of them, or their node check.
  std::vector<std::string> sick;
  for (const auto& f : in.failures)
    if (f.kind == StepFailureKind::NodeLost) add(sick, f.node);
  for (const auto& n : in.nodes)
    if (unhealthy(n)) add(sick, n);
  for (const auto& n : in.check_failed) add(sick, n);

  // The cause: the node check, else a lost node, else the first task srun
  // saw end (with -K1 the others were stopped because of it), passing over
  // the bundled launcher's "stopped because a peer failed" (kPeerFailedExit)
  // and "checkpointed for a requeue" (kRequeueExit): under load srun may
  // name such a task before the one that failed.
  if (!in.check_failed.empty()) {
    d.kind = StepFailureKind::NodeCheck;
    d.failed = in.check_failed;
    d.cause = fmt::format("the node check failed on {}", join(in.check_failed, ", "));
  } else if (std::vector<std::string> lost = [&] {
               std::vector<std::string> v;
               for (const auto& n : sick)
                 if (contains(in.nodes, n)) v.push_back(n);
               return v;
             }();
             !lost.empty()) {
    d.kind = StepFailureKind::NodeLost;
    d.failed = lost;
    std::vector<std::string> words;
    for (const auto& n : lost) {
      auto it = in.node_states.find(n);
      words.push_back(it == in.node_states.end() ? n : fmt::format("{} (Slurm: {})", n, it->second));
    }
    d.cause = fmt::format("node {} was lost", join(words, ", "));
  } else if (!in.watchdog_stall.empty()) {
    // The watchdog killed the step's tasks: srun's lines name them all.
    d.kind = StepFailureKind::Stalled;
    for (const auto& n : in.watchdog_nodes)
      if (contains(in.nodes, n)) add(d.failed, n);
    d.cause = "the watchdog ended the step: " + in.watchdog_stall;
  } else {
    auto task_ended = [](const StepFailure& f) {
      return f.kind == StepFailureKind::TaskExited || f.kind == StepFailureKind::TaskKilled;
    };
    auto first = std::find_if(in.failures.begin(), in.failures.end(), [&](const StepFailure& f) {
      bool follower = f.kind == StepFailureKind::TaskExited && (f.code == kPeerFailedExit || f.code == kRequeueExit);
      return task_ended(f) && !follower;
    });
    if (first == in.failures.end()) first = std::find_if(in.failures.begin(), in.failures.end(), task_ended);
    if (first != in.failures.end()) {
      d.kind = first->kind;
      d.failed = {first->node};
      d.cause = first->kind == StepFailureKind::TaskKilled
                    ? fmt::format("{} on {} was killed (signal {})", task_words(*first, in.tasks_are_ranks),
                                  first->node, *first->signal)
                    : fmt::format("{} on {} exited with exit code {}", task_words(*first, in.tasks_are_ranks),
                                  first->node, *first->code);
    } else {
      d.cause = fmt::format("the training step exited with status {}", in.step_rc);
    }
  }

  auto fall_back = [&](const std::string& why) {
    d.exclude = sick;
    // A task's node is suspect too: the requeued job does not need it.
    if (d.kind == StepFailureKind::TaskKilled || d.kind == StepFailureKind::TaskExited ||
        d.kind == StepFailureKind::Stalled)
      for (const auto& n : d.failed) add(d.exclude, n);
    for (const auto& n : in.slow_nodes) add(d.exclude, n);
    bool requeue = in.attempt < in.max_requeues;
    d.verdict = requeue ? AgentVerdict::Requeue : AgentVerdict::Fail;
    d.text = fmt::format("{}; {}; {}", d.cause, why,
                         requeue ? (d.exclude.empty() ? std::string("requeueing the job")
                                                      : "requeueing the job without " + join(d.exclude, ", "))
                                 : std::string(in.max_requeues > 0 ? "requeue.max_restarts reached: the job fails"
                                                                   : "no requeue: section: the job fails"));
    return d;
  };
  // Every task stopped with 75, the bundled trainer's "checkpointed, requeue
  // me" (Slurm signalled the step itself): the requeue's, not a failure.
  bool stopped_for_requeue =
      sick.empty() && !in.failures.empty() && std::all_of(in.failures.begin(), in.failures.end(), [](const StepFailure& f) {
        return f.kind == StepFailureKind::TaskExited && f.code == kRequeueExit;
      });
  if (stopped_for_requeue) {
    d.cause = fmt::format("the program checkpointed and stopped for a requeue (exit status {})", kRequeueExit);
    d.failed.clear();
    return fall_back("no in-job restart");
  }
  if (in.restarts_done >= in.max_in_job)
    return fall_back(fmt::format("in-job restarts used up ({} of {})", in.restarts_done, in.max_in_job));

  // Left out: the sick nodes, and a failed task's node where a healthy spare
  // can take its place or the step may shrink without it (a rank killed by
  // an ECC error says little about the program and much about the node).
  // Otherwise the task's node is kept: its Slurm state is fine and the node
  // check runs again first.
  size_t target = in.full_nodes > 0 ? static_cast<size_t>(in.full_nodes) : in.nodes.size();
  size_t fewest = in.min_nodes > 0 ? std::min(target, static_cast<size_t>(in.min_nodes)) : target;
  std::vector<std::string> healthy_spares;
  for (const auto& s : in.spares)
    if (!unhealthy(s) && !contains(sick, s)) healthy_spares.push_back(s);
  for (const auto& n : in.nodes)
    if (contains(sick, n)) d.left_out.push_back(n);
  // Suspects: the failed task's or the stall culprit's node first, then the
  // slow ones (watchdog.exclude_slow).
  std::vector<std::string> kept_suspect, slow_left_out;
  std::vector<std::string> suspects = d.failed;
  for (const auto& n : in.slow_nodes)
    if (contains(in.nodes, n)) add(suspects, n);
  for (const auto& n : suspects)
    if (!contains(d.left_out, n)) {
      bool slow = !contains(d.failed, n);
      if (in.nodes.size() - d.left_out.size() - 1 + healthy_spares.size() >= fewest) {
        d.left_out.push_back(n);
        if (slow) slow_left_out.push_back(n);
      } else {
        kept_suspect.push_back(slow ? n + " (slow)" : n);
      }
    }
  for (const auto& n : in.nodes)
    if (!contains(d.left_out, n)) d.nodes.push_back(n);
  size_t s = 0;
  while (d.nodes.size() < target && s < healthy_spares.size()) {
    d.nodes.push_back(healthy_spares[s]);
    d.taken.push_back(healthy_spares[s++]);
  }
  if (d.nodes.size() < fewest)
    return fall_back(fewest < target
                         ? fmt::format("too few healthy nodes left ({} of {}, no spare left, restart.min_nodes {})",
                                       d.nodes.size(), target, fewest)
                         : fmt::format("too few healthy nodes left for {} ({} of {}, no spare left)", target,
                                       d.nodes.size(), target));
  for (; s < healthy_spares.size(); ++s) d.spares.push_back(healthy_spares[s]);
  d.verdict = AgentVerdict::Go;
  d.shrunk = d.nodes.size() < target;
  std::vector<std::string> done;
  if (!d.left_out.empty()) {
    std::vector<std::string> named;
    for (const auto& n : d.left_out) named.push_back(contains(slow_left_out, n) ? n + " (slow)" : n);
    done.push_back(join(named, ", ") + " left out");
  }
  if (!d.taken.empty()) done.push_back(fmt::format("spare{} {} taken", d.taken.size() > 1 ? "s" : "", join(d.taken, ", ")));
  if (!kept_suspect.empty()) done.push_back(join(kept_suspect, ", ") + " kept (no spare left)");
  if (d.shrunk)
    done.push_back(fmt::format("{}shrunk to {} of {} node{} (restart.min_nodes {})", d.taken.empty() && kept_suspect.empty() ? "no spare left: " : "",
                               d.nodes.size(), target, target == 1 ? "" : "s", fewest));
  if (done.empty()) done.push_back("same nodes");
  d.text = d.cause + "; " + join(done, ", ");
  return d;
}

std::string in_job_record_path(const std::string& log_base, int attempt) {
  return job_files::in_job_restarts(log_base, attempt);
}

std::string in_job_resumed_path(const std::string& log_base, int attempt, int restart) {
  return fmt::format("{}.restart{}.in-job.resumed{}.json", log_base, attempt, restart);
}

std::string in_job_progress_path(const std::string& log_base, int attempt, int step) {
  return fmt::format("{}.restart{}.in-job.progress{}.json", log_base, attempt, step);
}

std::optional<double> read_in_job_progress(const std::string& log_base, int attempt, int step) {
  try {
    auto j = nlohmann::json::parse(read_file(in_job_progress_path(log_base, attempt, step), 4096), nullptr, false);
    if (j.is_object() && j.contains("at") && j["at"].is_number() && j["at"].get<double>() > 0) return j["at"].get<double>();
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

nlohmann::json in_job_record_json(const InJobRecord& r) {
  nlohmann::json restarts = nlohmann::json::array();
  for (const auto& x : r.restarts) {
    restarts.push_back({{"number", x.number}, {"kind", step_failure_kind_name(x.kind)}, {"cause", x.cause},
                        {"text", x.text}, {"failed", x.failed}, {"left_out", x.left_out}, {"taken", x.taken},
                        {"nodes", x.nodes}, {"step_rc", x.step_rc}, {"decided_at", x.decided_at},
                        {"started_at", x.started_at}});
    if (x.last_progress_at > 0) restarts.back()["last_progress_at"] = x.last_progress_at;
  }
  nlohmann::json j = {{"attempt", r.attempt}, {"of", r.of}, {"restarts", restarts}};
  if (r.full_nodes > 0) j["full_nodes"] = r.full_nodes;
  if (!r.fallback.empty()) j["fallback"] = {{"action", r.fallback}, {"why", r.fallback_why}};
  return j;
}

std::optional<InJobRecord> parse_in_job_record(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  try {
    InJobRecord r;
    r.attempt = j.value("attempt", 0);
    r.of = j.value("of", 0);
    r.full_nodes = j.value("full_nodes", 0);
    for (const auto& x : j.value("restarts", nlohmann::json::array())) {
      InJobRestart e;
      e.number = x.value("number", 1);
      e.kind = parse_step_failure_kind(x.value("kind", ""));
      e.cause = x.value("cause", "");
      e.text = x.value("text", "");
      e.failed = x.value("failed", std::vector<std::string>{});
      e.left_out = x.value("left_out", std::vector<std::string>{});
      e.taken = x.value("taken", std::vector<std::string>{});
      e.nodes = x.value("nodes", std::vector<std::string>{});
      e.step_rc = x.value("step_rc", 0);
      e.decided_at = x.value("decided_at", 0.0);
      e.started_at = x.value("started_at", 0.0);
      e.last_progress_at = x.value("last_progress_at", 0.0);
      r.restarts.push_back(e);
    }
    if (j.contains("fallback") && j["fallback"].is_object()) {
      r.fallback = j["fallback"].value("action", "");
      r.fallback_why = j["fallback"].value("why", "");
    }
    return r;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

std::optional<InJobRecord> read_in_job_record(const std::string& log_base, int attempt) {
  std::optional<InJobRecord> r;
  try {
    r = parse_in_job_record(read_file(in_job_record_path(log_base, attempt), 1 << 20));
  } catch (const std::exception&) {
    return std::nullopt;
  }
  // Where each restarted step resumed (the watchdog writes it apart, so that
  // the record has one writer at a time).
  if (r)
    for (auto& x : r->restarts) {
      if (x.started_at <= 0) continue;
      try {
        auto j = nlohmann::json::parse(read_file(in_job_resumed_path(log_base, attempt, x.number), 4096), nullptr, false);
        if (!j.is_object() || !j.contains("epoch")) continue;
        double epoch = j.value("epoch", 0.0);
        long long step = j.value("step", -1LL);
        x.resumed = step >= 0 ? fmt::format("epoch {:g} step {}", epoch, step) : fmt::format("epoch {:g}", epoch);
        x.resumed_at = j.value("at", 0.0);
        if (j.contains("from") && j["from"].is_string()) x.resumed_from = j["from"].get<std::string>();
      } catch (const std::exception&) {
      }
    }
  return r;
}

std::string describe_in_job(const InJobRecord& r) {
  std::vector<std::string> parts;
  if (!r.restarts.empty()) {
    const InJobRestart& last = r.restarts.back();
    parts.push_back(fmt::format("restart {} of {} in the job: {}{}{}{}", last.number, r.of, last.text,
                                last.started_at > 0 ? "" : " (starting)",
                                last.resumed.empty() ? "" : "; training again at " + last.resumed,
                                last.resumed_from.empty() ? "" : ", resumed from " + last.resumed_from));
  }
  if (!r.fallback.empty()) parts.push_back(r.fallback_why);
  return join(parts, "; ");
}

InJobHistory read_in_job_history(const std::string& log_base) {
  InJobHistory h;
  for (int attempt = 0; attempt < 64; ++attempt) {
    std::optional<InJobRecord> r = read_in_job_record(log_base, attempt);
    if (!r) continue;
    for (const auto& x : r->restarts) {
      ++h.count;
      std::string gap = "not started";
      // From the last progress before the failure where the watchdog saw
      // one: what Slurm took to notice a lost node (up to SlurmdTimeout)
      // is lost too.
      bool from_progress = x.last_progress_at > 0 && x.last_progress_at <= x.decided_at;
      double from = from_progress ? x.last_progress_at : x.decided_at;
      std::string before =
          from_progress ? fmt::format("; {:.1f} s of it from the last progress to the step's end", x.decided_at - from) : "";
      if (x.resumed_at > 0 && x.decided_at > 0) {
        double s = std::max(0.0, x.resumed_at - from);
        h.lost_s += s;
        gap = fmt::format("training again after {:.1f} s ({}{})", s, x.resumed, before);
      } else if (x.started_at > 0 && x.decided_at > 0) {
        double s = std::max(0.0, x.started_at - from);
        h.lost_s += s;
        gap = fmt::format("new step after {:.1f} s (not yet seen training{})", s, before);
      }
      h.restarts.push_back(fmt::format("{}restart {} of {}: {}; {}", attempt > 0 ? fmt::format("attempt {}, ", attempt + 1) : "",
                                       x.number, r->of, x.text, gap));
      if (r->full_nodes > 0 && !x.nodes.empty() && static_cast<int>(x.nodes.size()) < r->full_nodes && !h.shrunk) {
        h.shrunk = true;
        h.shrunk_to = fmt::format("{} of {} nodes from restart {}", x.nodes.size(), r->full_nodes, x.number);
      }
    }
    if (!r->fallback.empty())
      h.restarts.push_back(fmt::format("{}then: {}", attempt > 0 ? fmt::format("attempt {}, ", attempt + 1) : "", r->fallback_why));
  }
  return h;
}

}  // namespace ddpctl
