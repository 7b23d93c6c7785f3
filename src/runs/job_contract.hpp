#pragma once
// The contract between the job script (templates/agent.sh.mustache,
// launch.sh.mustache) and the job agent (`ddpctl job …`), in one place: the
// exit statuses the script's case arms read, the `key value` lines it
// parses, the watchdog's actions and the outcomes its record keeps. Each
// closed set is an enum with its wire text or number in one table; the C++
// prints and parses through it and render.cpp hands the numbers and keys to
// the templates (docs/templates.md), so neither side spells them twice.
//
// The wire values never change: a job whose script was rendered by one
// ddpctl may run (or be requeued) under another, and a user's own template
// parts may still spell them out.
#include <optional>
#include <string>
#include <vector>

#include "spec/stall_action.hpp"

namespace ddpctl {

// The agent's verdict: `job checked`'s and `job step-ended`'s exit status.
// They are apart from the CLI's own (1 a user error, 2 usage, 3 an internal
// error) and a crash's (126 and up): on any other status the script goes on
// training and reports the agent's error as the agent's.
enum class AgentVerdict {
  Go,       // 0: train (after the check), or start the step again (after step-ended)
  Requeue,  // 10: requeue the job without the nodes printed
  Fail,     // 11: the job fails
};
const std::vector<AgentVerdict>& agent_verdicts();
int verdict_status(AgentVerdict v);
std::string verdict_name(AgentVerdict v);  // "go", "requeue", "fail": render's `verdict_<name>`
// nullopt for a status that is no verdict (the agent failing).
std::optional<AgentVerdict> verdict_from_status(int status);

// The lines `job step-ended` prints for the script (launch.sh's `while read
// -r key value`): one `key value` line each; the script ignores keys it
// does not know.
enum class StepEndedKey {
  Nodes,    // the next step's nodes, space-separated (Go)
  Spares,   // the spares left, space-separated (Go)
  Exclude,  // the nodes the requeued job leaves out, comma-separated (Requeue)
  Why,      // the decision in words (always)
  // Every task stopped with the trainer's requeue exit (Requeue): Slurm
  // signalled the step (a preemption); the script's own requeue after the
  // restarts' loop says why, as without restart:.
  Stopped,
};
const std::vector<StepEndedKey>& step_ended_keys();
std::string step_ended_key_text(StepEndedKey k);  // "nodes", ...
std::string step_ended_key_name(StepEndedKey k);  // render's `step_ended_<name>`
std::optional<StepEndedKey> parse_step_ended_key(const std::string& text);
// "nodes g1 g2\n"
std::string step_ended_line(StepEndedKey k, const std::string& value);

// `job checked` on Requeue prints two lines (agent.sh splits them at the
// first newline): the nodes to exclude, comma-separated, then the reason.
std::string checked_requeue_lines(const std::vector<std::string>& nodes, const std::string& reason);

// The line the batch shell writes to its stderr before each training step
// (launch.sh, rendered as `step_marker`): srun's lines after the latest one
// are that step's (in_job_restart.hpp, failure.cpp).
inline constexpr const char* kStepMarker = "ddpctl: training step ";

// The bundled trainer's exit status after it checkpointed for a requeue
// (launch.sh requeues on it, rendered as `trainer_requeue_exit`).
inline constexpr int kRequeueExit = 75;

// The bundled trainer's per-node launcher's exit status when it stopped only
// because a worker on another node failed (its own worker lost the peer's
// connection): the step's cause is elsewhere, whichever task srun names first.
inline constexpr int kPeerFailedExit = 76;

// The watchdog's act on a stall (`job watch --action`): the spec's
// watchdog.action, whose words are the wire's (spec/stall_action.hpp).

// What the watchdog did, as its record (<log base>.stall.json `taken`) keeps
// it: nothing, a warning, or an act before it runs ("cancelling"), after it
// ran ("cancelled"; for restart: the step ended for an in-job restart) or
// failed ("cancel-failed", with the record's `result`).
enum class WatchdogOutcome {
  None,
  Warned,
  Cancelling, Cancelled, CancelFailed,
  Requeuing, Requeued, RequeueFailed,
  Restarting, Restarted, RestartFailed,
};
enum class OutcomePhase { None, Warned, Acting, Done, Failed };
const std::vector<WatchdogOutcome>& watchdog_outcomes();
std::string watchdog_outcome_text(WatchdogOutcome o);  // "" for None, "warned", "cancelling", ...
std::optional<WatchdogOutcome> parse_watchdog_outcome(const std::string& text);
// The act it is about (Warn for Warned and None) and where the act stands.
StallAction outcome_action(WatchdogOutcome o);
OutcomePhase outcome_phase(WatchdogOutcome o);
// The outcome of `a` (Cancel, Requeue or Restart) at `phase` (Acting, Done, Failed).
WatchdogOutcome watchdog_outcome(StallAction a, OutcomePhase phase);

}  // namespace ddpctl
