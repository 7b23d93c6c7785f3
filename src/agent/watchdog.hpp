#pragma once
// The stall watchdog, as a decision over what the job agent observes
// (docs/running.md): observations in, a verdict out, no I/O. `ddpctl job
// watch` runs in the batch shell's node, observes every few seconds and acts
// (warn, cancel, requeue, restart; job_watch.hpp); status reads the record it
// leaves (runs/stall_record.hpp).
#include <optional>
#include <string>
#include <vector>

#include "runs/stall_record.hpp"

namespace ddpctl {


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

}  // namespace ddpctl
