#include "agent/in_job_restart.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "base/text.hpp"

namespace ddpctl {

namespace {

void add(std::vector<std::string>& v, const std::string& s) {
  if (!s.empty() && !contains(v, s)) v.push_back(s);
}

std::string task_words(const StepFailure& f, bool tasks_are_ranks) {
  if (!f.task) return "a task";
  return (tasks_are_ranks ? "rank " : "task ") + std::to_string(*f.task);
}

bool unhealthy(const RestartInput& in, const std::string& node) {
  auto it = in.node_states.find(node);
  return it != in.node_states.end() && node_state_unhealthy(it->second);
}

// The nodes no step may run on again in this job: lost, failing Slurm's
// view of them, or their node check.
std::vector<std::string> sick_nodes(const RestartInput& in) {
  std::vector<std::string> sick;
  for (const auto& f : in.failures)
    if (f.kind == StepFailureKind::NodeLost) add(sick, f.node);
  for (const auto& n : in.nodes)
    if (unhealthy(in, n)) add(sick, n);
  for (const auto& n : in.check_failed) add(sick, n);
  return sick;
}

// The first task srun saw end (with -K1 the others were stopped because of
// it), passing over the bundled launcher's "stopped because a peer failed"
// (kPeerFailedExit) and "checkpointed for a requeue" (kRequeueExit): under
// load srun may name such a task before the one that failed.
void first_task_ended(const RestartInput& in, RestartDecision& d) {
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

// The cause: the node check, else a lost node, else the watchdog's stall,
// else the first task that ended.
void decide_cause(const RestartInput& in, const std::vector<std::string>& sick, RestartDecision& d) {
  std::vector<std::string> lost;
  for (const auto& n : sick)
    if (contains(in.nodes, n)) lost.push_back(n);
  if (!in.check_failed.empty()) {
    d.kind = StepFailureKind::NodeCheck;
    d.failed = in.check_failed;
    d.cause = fmt::format("the node check failed on {}", join(in.check_failed, ", "));
  } else if (!lost.empty()) {
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
    first_task_ended(in, d);
  }
}

// No in-job restart: the requeue, leaving out the sick, failed and slow
// nodes, while requeues are left; else the job fails.
RestartDecision fall_back(const RestartInput& in, const std::vector<std::string>& sick, RestartDecision d,
                          const std::string& why) {
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
}

// The next step's nodes, chosen into `d`.
struct NodeChoice {
  size_t target = 0, fewest = 0;  // the shape's nodes, and the fewest the step may shrink to
  size_t spare = 0;               // the healthy spares used
  std::vector<std::string> healthy_spares, kept_suspect, slow_left_out;
};

// Left out: the sick nodes, and a failed task's node where a healthy spare
// can take its place or the step may shrink without it (a rank killed by
// an ECC error says little about the program and much about the node).
// Otherwise the task's node is kept: its Slurm state is fine and the node
// check runs again first.
NodeChoice choose_nodes(const RestartInput& in, const std::vector<std::string>& sick, RestartDecision& d) {
  NodeChoice c;
  c.target = in.full_nodes > 0 ? static_cast<size_t>(in.full_nodes) : in.nodes.size();
  c.fewest = in.min_nodes > 0 ? std::min(c.target, static_cast<size_t>(in.min_nodes)) : c.target;
  for (const auto& s : in.spares)
    if (!unhealthy(in, s) && !contains(sick, s)) c.healthy_spares.push_back(s);
  for (const auto& n : in.nodes)
    if (contains(sick, n)) d.left_out.push_back(n);
  // Suspects: the failed task's or the stall culprit's node first, then the
  // slow ones (watchdog.exclude_slow).
  std::vector<std::string> suspects = d.failed;
  for (const auto& n : in.slow_nodes)
    if (contains(in.nodes, n)) add(suspects, n);
  for (const auto& n : suspects)
    if (!contains(d.left_out, n)) {
      bool slow = !contains(d.failed, n);
      if (in.nodes.size() - d.left_out.size() - 1 + c.healthy_spares.size() >= c.fewest) {
        d.left_out.push_back(n);
        if (slow) c.slow_left_out.push_back(n);
      } else {
        c.kept_suspect.push_back(slow ? n + " (slow)" : n);
      }
    }
  for (const auto& n : in.nodes)
    if (!contains(d.left_out, n)) d.nodes.push_back(n);
  while (d.nodes.size() < c.target && c.spare < c.healthy_spares.size()) {
    d.nodes.push_back(c.healthy_spares[c.spare]);
    d.taken.push_back(c.healthy_spares[c.spare++]);
  }
  return c;
}

// What was done about the cause: "g3 left out, spare g5 taken", "same nodes".
std::string restart_text(const RestartDecision& d, const NodeChoice& c) {
  std::vector<std::string> done;
  if (!d.left_out.empty()) {
    std::vector<std::string> named;
    for (const auto& n : d.left_out) named.push_back(contains(c.slow_left_out, n) ? n + " (slow)" : n);
    done.push_back(join(named, ", ") + " left out");
  }
  if (!d.taken.empty()) done.push_back(fmt::format("spare{} {} taken", d.taken.size() > 1 ? "s" : "", join(d.taken, ", ")));
  if (!c.kept_suspect.empty()) done.push_back(join(c.kept_suspect, ", ") + " kept (no spare left)");
  if (d.shrunk)
    done.push_back(fmt::format("{}shrunk to {} of {} node{} (restart.min_nodes {})", d.taken.empty() && c.kept_suspect.empty() ? "no spare left: " : "",
                               d.nodes.size(), c.target, c.target == 1 ? "" : "s", c.fewest));
  if (done.empty()) done.push_back("same nodes");
  return d.cause + "; " + join(done, ", ");
}

}  // namespace

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
  std::vector<std::string> sick = sick_nodes(in);
  decide_cause(in, sick, d);
  // Every task stopped with 75, the bundled trainer's "checkpointed, requeue
  // me" (Slurm signalled the step itself): the requeue's, not a failure.
  bool stopped_for_requeue =
      sick.empty() && !in.failures.empty() && std::all_of(in.failures.begin(), in.failures.end(), [](const StepFailure& f) {
        return f.kind == StepFailureKind::TaskExited && f.code == kRequeueExit;
      });
  if (stopped_for_requeue) {
    d.cause = fmt::format("the program checkpointed and stopped for a requeue (exit status {})", kRequeueExit);
    d.failed.clear();
    d.stopped_for_requeue = true;
    return fall_back(in, sick, d, "no in-job restart");
  }
  if (in.restarts_done >= in.max_in_job)
    return fall_back(in, sick, d, fmt::format("in-job restarts used up ({} of {})", in.restarts_done, in.max_in_job));
  NodeChoice c = choose_nodes(in, sick, d);
  if (d.nodes.size() < c.fewest)
    return fall_back(in, sick, d,
                     c.fewest < c.target
                         ? fmt::format("too few healthy nodes left ({} of {}, no spare left, restart.min_nodes {})",
                                       d.nodes.size(), c.target, c.fewest)
                         : fmt::format("too few healthy nodes left for {} ({} of {}, no spare left)", c.target,
                                       d.nodes.size(), c.target));
  for (size_t s = c.spare; s < c.healthy_spares.size(); ++s) d.spares.push_back(c.healthy_spares[s]);
  d.verdict = AgentVerdict::Go;
  d.shrunk = d.nodes.size() < c.target;
  d.text = restart_text(d, c);
  return d;
}

}  // namespace ddpctl
