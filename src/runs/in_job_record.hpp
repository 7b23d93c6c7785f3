#pragma once
// The record of each attempt's in-job restarts (<log base>.restart<N>.in-job.json),
// written by `job step-ended` and `job step-started` (job_step_ended.hpp) and
// the watchdog (where the new step trained again, the old one's last
// progress), read by status and report.
#include <nlohmann/json.hpp>
#include <optional>
#include <map>
#include <string>
#include <vector>

#include "runs/step_failure.hpp"

namespace ddpctl {

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
  std::map<int, double> lost_by_attempt;  // the same, by attempt (usage_account.hpp)
  bool shrunk = false;
  std::string shrunk_to;  // "1 of 2 nodes from restart 1"
};
InJobHistory read_in_job_history(const std::string& log_base);

}  // namespace ddpctl
