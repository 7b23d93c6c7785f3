#pragma once
// The record the stall watchdog (agent/watchdog.hpp, job_watch.hpp) keeps of
// a stall and of what it did: <log base>.stall.json, which status, report,
// logs and the in-job restart read; and its words.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runs/job_contract.hpp"

namespace ddpctl {

// StallAction, its names and the outcomes the record keeps: job_contract.hpp.

struct StoppedTask {
  int task = 0;
  std::optional<int> rank;
  std::string node;
};

// "rank 1 (g1)", "ranks 1, 3 (g1, g2)", "task 1 (g2)"
std::string describe_tasks(const std::vector<StoppedTask>& t);

// The record the watchdog keeps: <log base>.stall.json.
struct StallRecord {
  int attempt = 0;
  bool stalled = false;
  double since = 0, detected_at = 0, for_s = 0, stall_after_s = 0;
  std::string action;  // warn, cancel, requeue, restart
  // None, Warned; Cancelling/Requeuing/Restarting before the act, then
  // Cancelled/Requeued/Restarted (the step ended for an in-job restart), or
  // CancelFailed/RequeueFailed/RestartFailed with `result` (job_contract.hpp).
  WatchdogOutcome taken = WatchdogOutcome::None;
  int step = 0;  // the training step it watched (DDPCTL_RESTART: in-job restarts)
  std::string result;  // what the act returned: "scancel 42: done", or why it failed
  std::string why;
  std::string basis, detail;  // the verdict's: what counted as progress, who stopped
  std::vector<StoppedTask> stopped;
  std::vector<std::string> stacks;  // files holding the ranks' stacks
  // The culprit decision over those stacks (culprit.hpp): who is not in a
  // collective while the others wait in one, or why none is named.
  std::string culprit;
  bool culprit_named = false;
  // How each rank's stacks were taken: "faulthandler: ranks 0, 1 (g1); none: rank 2 (g2)".
  std::string stacks_by;
  // torch's Flight Recorder (flight_recorder.hpp), dumped before the act:
  // what the dumps say ("rank 1 (g2) never entered all_reduce #7 (process
  // group 0); rank 0 (g1) is in it"), or why there are none; "" where no
  // node's agent had a dump pipe to ask (the run sets none).
  std::string flight_recorder;
  std::string flight_recorder_count;    // "2 of 2 ranks dumped"
  bool flight_recorder_named = false;   // it named the culprit, the stacks did not
  std::vector<std::string> flight_recorder_dumps;
  std::optional<double> resumed_at;
};
nlohmann::json stall_record_json(const StallRecord& r);
std::optional<StallRecord> read_stall_record(const std::string& log_base);
std::string stall_record_path(const std::string& log_base);
// "stalled 30s (no progress in the progress pattern): rank 1 (g1) ...; stacks
// in FILE"; when the stacks name a culprit, it is what the stall says:
// "stalled 30s: rank 1 (g1) is not in a collective — at ...; rank 0 (g1)
// waits in all_reduce; stacks in FILE"; when only the Flight Recorder names
// one: "stalled 30s: rank 1 (g2) never entered all_reduce #7 (process group
// 0); rank 0 (g1) is in it (flight recorder, 2 of 2 ranks dumped); ...";
// else what the dumps say follows the stacks. `for_s` overrides the
// record's duration (a live stall's).
std::string describe_stall(const StallRecord& r, std::optional<double> for_s = std::nullopt);

}  // namespace ddpctl
