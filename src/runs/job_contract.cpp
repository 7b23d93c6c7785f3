#include "runs/job_contract.hpp"

#include "base/text.hpp"

namespace ddpctl {

namespace {

// The tables: one row per value, its wire form beside it.
struct VerdictRow {
  AgentVerdict verdict;
  int status;
  const char* name;
};
const VerdictRow kVerdicts[] = {
    {AgentVerdict::Go, 0, "go"},
    {AgentVerdict::Requeue, 10, "requeue"},
    {AgentVerdict::Fail, 11, "fail"},
};

// `name` is the template variable's (render's step_ended_<name>), fixed
// whatever the wire text.
struct KeyRow {
  StepEndedKey key;
  const char* name;
  const char* text;
};
const KeyRow kStepEndedKeys[] = {
    {StepEndedKey::Nodes, "nodes", "nodes"},
    {StepEndedKey::Spares, "spares", "spares"},
    {StepEndedKey::Exclude, "exclude", "exclude"},
    {StepEndedKey::Why, "why", "why"},
    {StepEndedKey::Stopped, "stopped", "stopped"},
};

struct OutcomeRow {
  WatchdogOutcome outcome;
  const char* text;
  StallAction action;
  OutcomePhase phase;
};
const OutcomeRow kOutcomes[] = {
    {WatchdogOutcome::None, "", StallAction::Warn, OutcomePhase::None},
    {WatchdogOutcome::Warned, "warned", StallAction::Warn, OutcomePhase::Warned},
    {WatchdogOutcome::Cancelling, "cancelling", StallAction::Cancel, OutcomePhase::Acting},
    {WatchdogOutcome::Cancelled, "cancelled", StallAction::Cancel, OutcomePhase::Done},
    {WatchdogOutcome::CancelFailed, "cancel-failed", StallAction::Cancel, OutcomePhase::Failed},
    {WatchdogOutcome::Requeuing, "requeuing", StallAction::Requeue, OutcomePhase::Acting},
    {WatchdogOutcome::Requeued, "requeued", StallAction::Requeue, OutcomePhase::Done},
    {WatchdogOutcome::RequeueFailed, "requeue-failed", StallAction::Requeue, OutcomePhase::Failed},
    {WatchdogOutcome::Restarting, "restarting", StallAction::Restart, OutcomePhase::Acting},
    {WatchdogOutcome::Restarted, "restarted", StallAction::Restart, OutcomePhase::Done},
    {WatchdogOutcome::RestartFailed, "restart-failed", StallAction::Restart, OutcomePhase::Failed},
};

// The row of `rows` for which `pred` holds; nullptr when none does.
template <class Row, size_t N, class Pred>
const Row* find_in(const Row (&rows)[N], Pred pred) {
  for (const Row& r : rows)
    if (pred(r)) return &r;
  return nullptr;
}

template <class E, class Row, size_t N, class Get>
std::vector<E> all_of(const Row (&rows)[N], Get get) {
  std::vector<E> out;
  for (const Row& r : rows) out.push_back(get(r));
  return out;
}

}  // namespace

const std::vector<AgentVerdict>& agent_verdicts() {
  static const auto all = all_of<AgentVerdict>(kVerdicts, [](const VerdictRow& r) { return r.verdict; });
  return all;
}

int verdict_status(AgentVerdict v) { return find_in(kVerdicts, [v](const VerdictRow& r) { return r.verdict == v; })->status; }

std::string verdict_name(AgentVerdict v) { return find_in(kVerdicts, [v](const VerdictRow& r) { return r.verdict == v; })->name; }

std::optional<AgentVerdict> verdict_from_status(int status) {
  const VerdictRow* r = find_in(kVerdicts, [status](const VerdictRow& x) { return x.status == status; });
  if (!r) return std::nullopt;
  return r->verdict;
}

const std::vector<StepEndedKey>& step_ended_keys() {
  static const auto all = all_of<StepEndedKey>(kStepEndedKeys, [](const KeyRow& r) { return r.key; });
  return all;
}

std::string step_ended_key_text(StepEndedKey k) {
  return find_in(kStepEndedKeys, [k](const KeyRow& r) { return r.key == k; })->text;
}

std::string step_ended_key_name(StepEndedKey k) {
  return find_in(kStepEndedKeys, [k](const KeyRow& r) { return r.key == k; })->name;
}

std::optional<StepEndedKey> parse_step_ended_key(const std::string& text) {
  const KeyRow* r = find_in(kStepEndedKeys, [&](const KeyRow& x) { return text == x.text; });
  if (!r) return std::nullopt;
  return r->key;
}

std::string step_ended_line(StepEndedKey k, const std::string& value) { return step_ended_key_text(k) + " " + value + "\n"; }

std::string checked_requeue_lines(const std::vector<std::string>& nodes, const std::string& reason) {
  return join(nodes, ",") + "\n" + reason + "\n";
}

const std::vector<WatchdogOutcome>& watchdog_outcomes() {
  static const auto all = all_of<WatchdogOutcome>(kOutcomes, [](const OutcomeRow& r) { return r.outcome; });
  return all;
}

std::string watchdog_outcome_text(WatchdogOutcome o) {
  return find_in(kOutcomes, [o](const OutcomeRow& r) { return r.outcome == o; })->text;
}

std::optional<WatchdogOutcome> parse_watchdog_outcome(const std::string& text) {
  const OutcomeRow* r = find_in(kOutcomes, [&](const OutcomeRow& x) { return text == x.text; });
  if (!r) return std::nullopt;
  return r->outcome;
}

StallAction outcome_action(WatchdogOutcome o) {
  return find_in(kOutcomes, [o](const OutcomeRow& r) { return r.outcome == o; })->action;
}

OutcomePhase outcome_phase(WatchdogOutcome o) {
  return find_in(kOutcomes, [o](const OutcomeRow& r) { return r.outcome == o; })->phase;
}

WatchdogOutcome watchdog_outcome(StallAction a, OutcomePhase phase) {
  const OutcomeRow* r = find_in(kOutcomes, [&](const OutcomeRow& x) { return x.action == a && x.phase == phase; });
  return r ? r->outcome : WatchdogOutcome::None;
}

}  // namespace ddpctl
