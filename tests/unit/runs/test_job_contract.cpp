// The job script <-> agent contract (job_contract.hpp): each table both ways
// (every value prints and parses back, anything else is refused) and its wire
// values pinned (scripts already rendered read them); the rendered script's
// case arms: tests/unit/script/test_render_contract.cpp.
#include "catch.hpp"
#include <map>
#include <set>

#include "runs/job_contract.hpp"
#include "spec/spec.hpp"

using namespace ddpctl;

TEST_CASE("contract: every verdict prints and parses back and its statuses are the ones rendered scripts read", "[job_contract]") {
  std::set<int> statuses;
  std::set<std::string> names;
  for (AgentVerdict v : agent_verdicts()) {
    CHECK(verdict_from_status(verdict_status(v)) == v);
    statuses.insert(verdict_status(v));
    names.insert(verdict_name(v));
  }
  CHECK(statuses.size() == agent_verdicts().size());
  CHECK(names == std::set<std::string>{"go", "requeue", "fail"});
  // Pinned: a script rendered by another ddpctl reads these.
  CHECK(verdict_status(AgentVerdict::Go) == 0);
  CHECK(verdict_status(AgentVerdict::Requeue) == 10);
  CHECK(verdict_status(AgentVerdict::Fail) == 11);
}

TEST_CASE("contract: a status that is no verdict is refused (the agent's own failure: the job goes on)", "[job_contract]") {
  // The CLI's user error, usage and internal error, a crash's, a shell's, none.
  for (int status : {1, 2, 3, 9, 12, 75, 126, 127, 137, 143, 255, -1})
    CHECK_FALSE(verdict_from_status(status).has_value());
}

TEST_CASE("contract: step-ended's keys print and parse back, one line each and anything else is refused", "[job_contract]") {
  std::set<std::string> texts;
  for (StepEndedKey k : step_ended_keys()) {
    CHECK(parse_step_ended_key(step_ended_key_text(k)) == k);
    texts.insert(step_ended_key_text(k));
  }
  CHECK(texts == std::set<std::string>{"nodes", "spares", "exclude", "why", "stopped"});
  CHECK(step_ended_line(StepEndedKey::Nodes, "g1 g3") == "nodes g1 g3\n");
  CHECK(step_ended_line(StepEndedKey::Spares, "") == "spares \n");
  for (const char* other : {"", "node", "NODES", "why ", " why", "exclude,"}) CHECK_FALSE(parse_step_ended_key(other).has_value());
  CHECK(checked_requeue_lines({"g2", "g3"}, "node g2 cannot reach g1:29500") == "g2,g3\nnode g2 cannot reach g1:29500\n");
}

TEST_CASE("contract: the watchdog's actions print and parse back and anything else is refused", "[job_contract]") {
  std::set<std::string> texts;
  for (StallAction a : stall_actions()) {
    CHECK(parse_stall_action(stall_action_name(a)) == a);
    texts.insert(stall_action_name(a));
  }
  CHECK(texts == std::set<std::string>{"warn", "cancel", "requeue", "restart"});
  for (const char* other : {"", "Warn", "cancelled", "kill", "restart "}) CHECK_FALSE(parse_stall_action(other).has_value());
}

TEST_CASE("contract: the watchdog's outcomes print and parse back, each one act at one phase", "[job_contract]") {
  std::set<std::string> texts;
  for (WatchdogOutcome o : watchdog_outcomes()) {
    CHECK(parse_watchdog_outcome(watchdog_outcome_text(o)) == o);
    texts.insert(watchdog_outcome_text(o));
    OutcomePhase p = outcome_phase(o);
    if (p == OutcomePhase::Acting || p == OutcomePhase::Done || p == OutcomePhase::Failed)
      CHECK(watchdog_outcome(outcome_action(o), p) == o);
  }
  // Pinned: the stall records of running and ended jobs hold these words.
  CHECK(texts == std::set<std::string>{"", "warned", "cancelling", "cancelled", "cancel-failed", "requeuing", "requeued",
                                       "requeue-failed", "restarting", "restarted", "restart-failed"});
  CHECK(watchdog_outcome(StallAction::Cancel, OutcomePhase::Acting) == WatchdogOutcome::Cancelling);
  CHECK(watchdog_outcome(StallAction::Requeue, OutcomePhase::Done) == WatchdogOutcome::Requeued);
  CHECK(watchdog_outcome(StallAction::Restart, OutcomePhase::Failed) == WatchdogOutcome::RestartFailed);
  CHECK(outcome_action(WatchdogOutcome::CancelFailed) == StallAction::Cancel);
  CHECK(outcome_phase(WatchdogOutcome::Warned) == OutcomePhase::Warned);
  CHECK(parse_watchdog_outcome("") == WatchdogOutcome::None);
  for (const char* other : {"cancel", "Cancelled", "done", "requeue", " warned"}) CHECK_FALSE(parse_watchdog_outcome(other).has_value());
}
