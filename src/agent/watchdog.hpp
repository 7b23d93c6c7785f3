#pragma once
// The stall watchdog and the guides' troubleshooting, as decisions over what
// the job agent observes (docs/running.md). `ddpctl job watch` runs in the
// batch shell's node, observes every few seconds and acts (warn, cancel,
// requeue); status reads the record it leaves.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runs/job_contract.hpp"
#include "runs/usage.hpp"

namespace ddpctl {

// StallAction, its names and the outcomes the record keeps: job_contract.hpp.

// One task of the training step (a rank under `launch: per_gpu`, a node's
// launcher otherwise), as seen at one moment.
struct TaskObservation {
  int task = 0;
  std::string node;
  std::optional<int> rank;      // per_gpu: the task's rank
  long long out_bytes = 0;      // its step log's size
  double out_mtime = 0;         // when it last wrote (Unix seconds; 0: never)
  std::optional<std::pair<double, long long>> progress;  // the progress pattern's latest (epoch, step)
  std::optional<double> cpu_pct;  // its processes' CPU over the last sample (100 = a core)
};

struct Observation {
  double now = 0;
  std::optional<double> progress_mtime;  // the progress file's (the bundled trainer's), when it exists
  std::vector<TaskObservation> tasks;
};

struct StoppedTask {
  int task = 0;
  std::optional<int> rank;
  std::string node;
};

struct StallVerdict {
  bool stalled = false;
  double since = 0;   // the last progress seen
  double for_s = 0;   // now - since
  std::string basis;  // what counts as progress: "the progress file", "the progress pattern", "output or CPU time"
  std::vector<StoppedTask> stopped;  // the ranks that stopped first (empty: none stands out)
  std::string detail;  // "rank 1 (g1) stopped at epoch 0 step 12; the others reached epoch 1 step 0"
  std::string why;     // "no progress (the progress pattern) for 42s: " + detail
};

// Decides, observation after observation, whether the job has stalled:
// no progress for `stall_after_s`. Progress is the progress file changing
// once it exists; else the progress pattern's reading advancing in any
// task's log once it has matched; else any task writing output or using CPU
// (more than `busy_pct` of a core).
class StallWatch {
 public:
  StallWatch(double stall_after_s, double started_at, double busy_pct = 5);
  StallVerdict observe(const Observation& o);

 private:
  double stall_after_, last_progress_, busy_pct_;
  std::optional<double> progress_mtime_;
  std::optional<std::pair<double, long long>> best_reading_;
  double out_mtime_ = 0;
  bool pattern_seen_ = false;
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

// The guides' troubleshooting over a job's recent samples (every node).
struct Hint {
  std::string kind;  // input-bound, memory, gpu-memory
  std::string node;
  std::string text;
};
// `window_s`: how far back a rule looks (minutes, so a passing dip is no news).
std::vector<Hint> usage_hints(const std::map<std::string, std::vector<UsageSample>>& samples, double now,
                              double window_s = 180);

}  // namespace ddpctl
