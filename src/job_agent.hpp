#pragma once
// The job agent's loops and actions (`ddpctl job ...`, started by the sbatch
// script; docs/running.md): the watchdog that observes the step's logs, the
// progress file and the usage samples, and acts on a stall; the stack dumps
// it records first; the requeue that excludes nodes. The decisions are in
// watchdog.hpp and node_check.hpp; this is their use of files and commands.
#include <optional>
#include <string>
#include <vector>

#include "process.hpp"
#include "run_spec.hpp"
#include "watchdog.hpp"

namespace ddpctl {

struct WatchOptions {
  std::string log_base;  // <output_dir>/<job name>_<job id>
  std::string job_id;
  int attempt = 0, max_restarts = 0;
  int tasks = 1, tasks_per_node = 1;
  bool per_gpu = false;  // a task is a rank
  std::vector<std::string> nodes;
  double stall_after_s = 1800, interval_s = 5;
  StallAction action = StallAction::Warn;
  std::optional<ProgressSpec> progress;  // the spec's pattern, applied to each task's log
  double stacks_wait_s = 20;  // how long the samplers may take to dump the stacks
};

// One observation of the running step from its files.
class StepObserver {
 public:
  explicit StepObserver(const WatchOptions& o);
  Observation observe(double now);

 private:
  const WatchOptions& o_;
  struct Seen {
    long long size = -1;
    std::optional<std::pair<double, long long>> progress;
  };
  std::vector<Seen> seen_;
};

// The watchdog: observe, decide, record, act. `tick` returns false once it
// has cancelled or requeued the job (nothing more to watch).
class Watcher {
 public:
  Watcher(WatchOptions o, CommandRunner& runner, double started_at);
  bool tick(double now);
  const StallRecord& record() const { return record_; }

 private:
  void act(const StallVerdict& v, double now);
  WatchOptions o_;
  CommandRunner& runner_;
  StepObserver observer_;
  StallWatch watch_;
  StallRecord record_;
  bool stalled_ = false;
};

// The ranks' stacks on this node: py-spy dump where it is on PATH, else gdb
// (thread apply all bt); the text for <log base>.restart<A>.stacks.<node>.txt.
// With `log_base`, the bundled trainer's workers (comm ddp-train, with a
// RANK) are asked first where they are: SIGQUIT, answered in
// <log_base>.state.<pid>.txt (trainer/state_dump.hpp); only on the real /proc.
std::string dump_stacks(CommandRunner& runner, const std::string& proc_root, const std::string& job_id,
                        const std::string& node, double budget_s, const std::string& log_base = "");
std::string stacks_path(const std::string& log_base, int attempt, const std::string& node);
// Opens the log folder: on NFS that revalidates its cached entries, so that a
// file another node just created is seen (negative lookups are cached).
void revalidate_folder(const std::string& log_base);
// Written by the watchdog; each node's sampler answers with its stacks file.
std::string stacks_request_path(const std::string& log_base, int attempt);

// Requeues the job from inside it; with `exclude`, the job leaves its queue
// excluding those nodes (requeuehold, update ExcNodeList, release: Slurm
// takes ExcNodeList only from a pending job). nullopt on success.
std::optional<std::string> requeue_job(CommandRunner& runner, const std::string& job_id,
                                       const std::vector<std::string>& exclude);

}  // namespace ddpctl
