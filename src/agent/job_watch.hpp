#pragma once
// `ddpctl job watch`: the watchdog in the job. What it is told
// (WatchOptions), what it sees of the running step from its files
// (StepObserver), and its loop: observe, decide (watchdog.hpp,
// straggler.hpp), act (job_acts.hpp), record. Files, commands and the clock
// come through Context, so that unit tests run the loop on a fake clock.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/job_events.hpp"
#include "agent/job_stacks.hpp"
#include "agent/straggler.hpp"
#include "agent/watchdog.hpp"
#include "base/clock.hpp"
#include "base/process.hpp"
#include "slurm/context.hpp"
#include "spec/run_spec.hpp"

namespace ddpctl {

struct WatchOptions {
  std::string log_base;  // <output_dir>/<job name>_<job id>
  std::string job_id;
  std::string slurm_id;  // what it requeues or cancels (JobPlace); empty: job_id
  int attempt = 0, max_requeues = 0;
  int step = 0;  // DDPCTL_RESTART: the training step of the attempt it watches (in-job restarts)
  bool in_job = false;  // restart: (DDPCTL_RESTART set): the step's latest progress is noted for report
  int tasks = 1, tasks_per_node = 1;
  bool per_gpu = false;  // a task is a rank
  std::vector<std::string> nodes;
  double stall_after_s = 1800, interval_s = 5;
  StallAction action = StallAction::Warn;
  std::optional<ProgressSpec> progress;  // the spec's pattern, applied to each task's log
  double stacks_wait_s = kStacksBudgetS + 3;  // how long the samplers may take to dump the stacks
  int step_pid = 0;           // the training step's process (the batch shell's srun); 0: not known
  // Where the ranks' Flight Recorder dumps go (TORCH_FR_DUMP_TEMP_FILE, else
  // TORCH_NCCL_DEBUG_INFO_TEMP_FILE, as the script set them); "": none asked for.
  std::string fr_dump_prefix;
  double slow_after_s = 300;  // a rank below kSlowBelow this long is slow (straggler.hpp)
  bool exclude_slow = false;  // its node is left out of the requeue
  // A raced run's folder (alternatives: that race again): before its requeue
  // the watcher races the group again with `race_program race-again`, as the
  // script's own requeues do; "": the job is not raced again from here.
  std::string race_run, race_program;
  JobEventSource events;  // where its events go (job_events.hpp)
};

// One observation of the running step from its files.
class StepObserver {
 public:
  explicit StepObserver(const WatchOptions& o);
  Observation observe(double now);
  // Where this step's output begins in task `task`'s log (0 but for an in-job restart's step).
  long long from(int task) const;

 private:
  const WatchOptions& o_;
  struct Seen {
    long long size = -1;
    // An in-job restart's step appends to the attempt's step logs: only
    // what it wrote counts (its size when this step's watch started).
    long long from = 0;
    std::optional<std::pair<double, long long>> progress;
  };
  std::vector<Seen> seen_;
};

// The watchdog: observe, decide, act, record. `tick` returns false once it
// has cancelled or requeued the job (nothing more to watch), or has given
// up trying to. A record that cannot be written never stops the act: it is
// reported on stderr, and the act happens all the same.
class Watcher {
 public:
  Watcher(WatchOptions o, CommandRunner& runner, Clock& clock, double started_at);
  bool tick(double now);
  const StallRecord& record() const { return record_; }

 private:
  bool act(const StallVerdict& v, double now);  // true: the watch goes on
  bool take_action();  // scancel or scontrol requeue; true when it did
  void say_stalled();  // the run's `stalled` event, with the culprit where named
  void save();         // the record, atomically; a failure is reported, not thrown
  void gather_stacks(double now);  // stall_evidence.hpp, then the record saved
  // An in-job restart's step: its first progress (the progress file, else
  // the pattern), where the program trains again, kept beside the in-job record.
  void note_resumed(double now);
  // In-job restarts: the step's latest progress (the progress file's or
  // pattern's), rewritten as it advances, where report's time lost of a
  // restart begins (in_job_progress_path).
  void note_progress(const StallVerdict& v);
  WatchOptions o_;
  CommandRunner& runner_;
  Clock& clock_;
  StepObserver observer_;
  StallWatch watch_;
  StragglerMonitor slow_;
  StallRecord record_;
  Observation last_;  // the latest observation (each task's CPU, for the culprit)
  bool stalled_ = false;
  bool requeue_ = false;  // the action to take: requeue, else cancel
  bool restart_ = false;  // watchdog.action restart: end the step for an in-job restart
  // The act requeue_ and restart_ choose (a requeue past max_requeues cancels).
  StallAction act_taken() const { return restart_ ? StallAction::Restart : requeue_ ? StallAction::Requeue : StallAction::Cancel; }
  int tries_ = 0;         // of the action, when it fails (a few, an interval apart)
  bool raced_again_ = false;  // race-again ran before the first try of the requeue
  double started_at_ = 0;
  bool resumed_noted_ = false;
  double progress_noted_ = 0;
};

// `job watch`: a tick every interval until the watcher is done, or the step
// (o.step_pid) has ended. The job's id and attempt come from ctx.env.
void run_watch(WatchOptions o, Context& ctx);

}  // namespace ddpctl
