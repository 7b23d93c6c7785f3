#pragma once
// In-job restarts (restart: {in_job, spares}; docs/running.md "When a rank or
// node is lost"): when the training step fails, the batch shell asks the job
// agent (`ddpctl job step-ended`) what to do. Here: what srun's lines and
// Slurm's node states say failed, the decision (a pure function: start the
// step again on which nodes, or fall back to the requeue, or fail), and the
// record of each restart (<log base>.restart<N>.in-job.json) that status
// reads.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "spec/job_contract.hpp"

namespace ddpctl {

// kStepMarker and kRequeueExit, which the script shares: job_contract.hpp.

// What srun said about one task or node of the step.
enum class StepFailureKind { TaskExited, TaskKilled, NodeLost, NodeCheck, Stalled, Unknown };
std::string step_failure_kind_name(StepFailureKind k);  // "task-exited", ... (the record's)
StepFailureKind parse_step_failure_kind(const std::string& s);

struct StepFailure {
  StepFailureKind kind = StepFailureKind::Unknown;
  std::string node;
  std::optional<int> task;
  std::optional<int> code, signal;
};
// The batch log's lines after the latest step marker, srun's failures in the
// order it said them ("srun: error: g2: task 1: Killed", "srun: error: Node
// failure on g3").
std::vector<StepFailure> parse_step_end(const std::vector<std::string>& batch_err_lines);

// `scontrol show node -o NAMES`: node -> its State ("IDLE", "DOWN*+NOT_RESPONDING").
std::map<std::string, std::string> parse_node_states(const std::string& show);
// A node Slurm says cannot run a step: down, drained or draining, failing, not responding.
bool node_state_unhealthy(const std::string& state);

struct RestartInput {
  std::vector<std::string> nodes;   // the failed step's, in order (the first held rank 0)
  std::vector<std::string> spares;  // the allocation's other nodes, not yet used
  int restarts_done = 0;            // in-job restarts of this attempt so far
  int max_in_job = 0;               // restart.in_job
  // The shape's nodes (the step's size before any shrink; 0: nodes.size())
  // and restart.min_nodes (0: never shrink below it).
  int full_nodes = 0, min_nodes = 0;
  int attempt = 0, max_requeues = 0;  // SLURM_RESTART_COUNT, requeue.max_restarts (0: no requeue)
  bool tasks_are_ranks = false;     // one task per rank (a task's number is its rank)
  int step_rc = 1;                  // the step's exit status as the batch shell saw it
  std::vector<StepFailure> failures;      // parse_step_end
  std::vector<std::string> check_failed;  // nodes whose node check before the step failed
  std::map<std::string, std::string> node_states;  // parse_node_states, for nodes and spares
  // The watchdog's act on this attempt, when it cancelled or requeued the
  // job (Cancelling, Requeued, ...): the step ended because of it.
  WatchdogOutcome watchdog_taken = WatchdogOutcome::None;
  // watchdog.action restart ended this step: the stall in words ("stalled
  // 1m00s: rank 1 (g2) is not in a collective — ...") and the nodes of the
  // ranks it names, left out like a failed task's.
  std::string watchdog_stall;
  std::vector<std::string> watchdog_nodes;
  // watchdog.exclude_slow's slow nodes: left out like a failed task's.
  std::vector<std::string> slow_nodes;
};

// What the batch shell does: `job step-ended`'s exit status (job_contract.hpp;
// launch.sh), Go meaning start the step again on `nodes`.
struct RestartDecision {
  AgentVerdict verdict = AgentVerdict::Fail;
  StepFailureKind kind = StepFailureKind::Unknown;
  std::string cause;                   // "rank 5 on g3 was killed (signal 9)"
  std::vector<std::string> failed;     // the nodes the cause names
  std::vector<std::string> left_out;   // of the step's nodes, not in the next one
  std::vector<std::string> taken;      // spares taken
  std::vector<std::string> nodes, spares;  // the next step's (Restart)
  bool shrunk = false;                 // the next step runs on fewer nodes than the shape's (min_nodes)
  std::vector<std::string> exclude;    // nodes the requeued job leaves out (Requeue)
  std::string text;                    // the cause and what was done about it, for status and the log
};
RestartDecision decide_restart(const RestartInput& in);

// The record of one attempt's in-job restarts.
struct InJobRestart {
  int number = 1;  // 1-based, within the attempt
  StepFailureKind kind = StepFailureKind::Unknown;
  std::string cause, text;
  std::vector<std::string> failed, left_out, taken, nodes;
  int step_rc = 0;         // how the step before it ended
  double decided_at = 0;   // epoch seconds
  // The failed step's last progress the watchdog saw (the progress file's
  // or pattern's; 0: none seen): where the time lost begins, before Slurm
  // noticed a lost node and the step ended.
  double last_progress_at = 0;
  double started_at = 0;   // when the new step was started (0: not yet; the record before the act)
  // Where the program trains again: the new step's first progress, as the
  // watchdog saw it a monitor interval or less after the step began
  // ("epoch 2 step 3"; the checkpoint it resumed from is at or before it);
  // "" until then, or without a watchdog.
  std::string resumed;
  // The checkpoint the bundled trainer said it resumed ("/ck/last.pt at
  // epoch 2, sample 0 of 1600 (written by 2 ranks, now 2)"); "" for a program of one's own.
  std::string resumed_from;
  double resumed_at = 0;  // when the watchdog saw it (epoch seconds; 0: not seen)
};
struct InJobRecord {
  int attempt = 0;
  int of = 0;          // restart.in_job
  int full_nodes = 0;  // the shape's nodes: a restart on fewer ran shrunk (restart.min_nodes)
  std::vector<InJobRestart> restarts;
  // When no restart was left or possible: "requeue" or "fail", and why.
  std::string fallback, fallback_why;
};
std::string in_job_record_path(const std::string& log_base, int attempt);
// <log base>.restart<N>.in-job.resumed<K>.json: {epoch, step, at} of restart K's step.
std::string in_job_resumed_path(const std::string& log_base, int attempt, int restart);
// <log base>.restart<N>.in-job.progress<K>.json: {at, basis}, step K's latest
// progress, which its watchdog rewrites as it sees progress (in-job restarts only).
std::string in_job_progress_path(const std::string& log_base, int attempt, int step);
// Its `at`; nullopt where there is none or it cannot be read.
std::optional<double> read_in_job_progress(const std::string& log_base, int attempt, int step);
nlohmann::json in_job_record_json(const InJobRecord& r);
std::optional<InJobRecord> parse_in_job_record(const std::string& text);
std::optional<InJobRecord> read_in_job_record(const std::string& log_base, int attempt);
// "restart 1 of 3 in the job: rank 5 on g3 was killed (signal 9); g3 left out, spare g5 taken",
// with the fallback after the latest; "" for a record without restarts or fallback.
std::string describe_in_job(const InJobRecord& r);

// For `report`: every attempt's in-job restarts of the job at `log_base`
// (attempts 0 to 63 that have a record), each with the time from the failed
// step's last progress (else its end) to training again; whether any step ran shrunk
// (restart.min_nodes).
struct InJobHistory {
  std::vector<std::string> restarts;  // "attempt 1, restart 1 of 2: ...; training again after 9.5 s (epoch 2 step 3)"
  int count = 0;
  // Summed over the restarts whose new step started: from the failed step's
  // last progress (its end where the watchdog saw none) to training again
  // (the new step's first progress), or to the new step's start where no
  // progress was seen.
  double lost_s = 0;
  bool shrunk = false;
  std::string shrunk_to;  // "1 of 2 nodes from restart 1"
};
InJobHistory read_in_job_history(const std::string& log_base);

}  // namespace ddpctl
