#include "script/preemption_note.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "base/text.hpp"

namespace ddpctl {

namespace {

std::string what_happens(const ClusterProfile& profile, const PreemptTerms& t, bool requeue) {
  if (t.mode.empty()) return "the profile does not say how (run `ddpctl doctor` at the site to read it)";
  const bool user_signal = profile.preemption && profile.preemption->user_signal.value_or(false);
  std::string by = t.by.empty() ? "" : " by a job of " + join(t.by, ", ");
  if (t.mode == "suspend") return fmt::format("it is suspended{} (stopped, no signal to act on) and resumed after", by);
  std::string grace = t.grace_s ? fmt::format("{} s", *t.grace_s) : std::string("an unknown");
  std::string then = t.mode == "requeue" ? "requeued (the same job id starts again from its script)"
                     : requeue ? "cancelled, unless ddpctl requeues it first: with requeue:, the script requeues the "
                                 "job within the grace once the training step checkpointed and stopped"
                               : "cancelled: the job ends there and is not run again";
  return fmt::format("preempted{} with {}, {} grace, then SIGKILL; {}", by,
                     user_signal ? "its --signal" : "SIGTERM", grace, then);
}

}  // namespace

const PreemptTerms* preemptible_terms(const ResolvedRun& run, const ResolvedShape& shape, std::string* where) {
  const std::string partition = shape.partition.empty() ? run.profile.default_partition : shape.partition;
  if (const Partition* p = run.profile.find_partition(partition); p && p->preemptible) {
    if (where) *where = "partition " + partition;
    return &*p->preemptible;
  }
  if (const QosEntry* q = run.profile.find_qos(shape.asked.qos); q && q->preemptible) {
    if (where) *where = "QOS " + shape.asked.qos;
    return &*q->preemptible;
  }
  return nullptr;
}

std::vector<std::string> preemption_notes(const ResolvedRun& run) {
  std::vector<std::string> notes;
  for (const auto& shape : run.shapes) {
    std::string where;
    const PreemptTerms* terms = preemptible_terms(run, shape, &where);
    if (!terms) continue;
    notes.push_back(fmt::format("shape {} runs on preemptible capacity ({}, profile {}): {}", shape.label, where,
                                run.profile.name, what_happens(run.profile, *terms, run.spec.requeue.has_value())));
  }
  return notes;
}

std::string outside_stop_why(const ResolvedRun& run, const ResolvedShape& shape) {
  std::string where;  // Slurm names (cluster.cpp): no quote, no $ in the script's words
  if (preemptible_terms(run, shape, &where))
    return fmt::format("after preemption: Slurm's SIGTERM stopped the training step, which checkpointed "
                       "({} is preemptible)",
                       where);
  return "after SIGTERM from Slurm to the training step, which checkpointed (not ddpctl's time-limit signal: a "
         "preemption, or a signal from outside)";
}

std::string preempted_exit_why(const ResolvedRun& run, const ResolvedShape& shape) {
  std::string where;
  const bool preemptible = preemptible_terms(run, shape, &where) != nullptr;
  return std::string("after preemption: Slurm preempted the job (its PreemptTime) and the training step ended with "
                     "another status than 75 (a launcher such as torchrun ends so on SIGTERM); the next attempt "
                     "resumes from the last checkpoint written") +
         (preemptible ? fmt::format(" ({} is preemptible)", where) : "");
}

long long race_again_limit_s(const ResolvedRun& run, const ResolvedShape& shape) {
  const PreemptTerms* t = preemptible_terms(run, shape);
  if (!t || !t->grace_s) return 60;
  return std::clamp(*t->grace_s / 3, 5LL, 60LL);
}

}  // namespace ddpctl
