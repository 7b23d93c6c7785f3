#pragma once
// The job agent (`ddpctl job ...`, started by the sbatch script; docs/running.md):
// what each subcommand does on the node, its loops included, so that the
// CLI only reads options and prints. The sampler's loop and the watchdog's
// (observe, decide, act, record), the node check and its verdict, the stack
// dumps, the environment record, the requeue that excludes nodes. The
// decisions are in watchdog.hpp and node_check.hpp; this is their use of
// files, commands, the clock and the job's environment, all through Context,
// so that unit tests run every loop on a fake clock.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "slurm/context.hpp"
#include "agent/culprit.hpp"
#include "agent/flight_recorder_pipe.hpp"
#include "agent/in_job_restart.hpp"
#include "agent/job_environment.hpp"
#include "agent/node_check.hpp"
#include "base/process.hpp"
#include "spec/run_spec.hpp"
#include "agent/sampler.hpp"
#include "agent/straggler.hpp"
#include "agent/watchdog.hpp"

namespace ddpctl {

// Where the agent runs, as Slurm's environment says: the job, this node, the attempt.
struct JobPlace {
  std::string job_id;
  // What scontrol and scancel act on: the job's id, or an array task's
  // <array id>_<task id> (Slurm runs one task of an array under the
  // array's own id, which names every task of the array to them).
  std::string slurm_id;
  std::string node;       // SLURMD_NODENAME, else the host's name
  std::string cluster, conf;  // SLURM_CLUSTER_NAME, SLURM_CONF (JobMatch)
  int attempt = 0;        // SLURM_RESTART_COUNT
  int cpus = 0;           // SLURM_CPUS_ON_NODE
  int gpus = 0;           // SLURM_GPUS_ON_NODE
  long long mem_mib = 0;  // SLURM_MEM_PER_NODE
  std::vector<int> gpu_indices;  // the step's (SLURM_STEP_GPUS), else the job's (SLURM_JOB_GPUS)
};
// A UserError when SLURM_JOB_ID is not set: the agent runs inside a job.
JobPlace job_place(const Environment& env);
// "0,2-3" -> {0, 2, 3} (Slurm's GPU index lists).
std::vector<int> parse_gpu_list(const std::string& s);
// A span of the agent's options ("30s", "10m", "1h" or seconds); a UserError naming `option`.
double agent_seconds(const std::string& s, const std::string& option);

// How long a node's dump of its ranks' stacks may take: faulthandler's
// answers come within a second, gdb on a torch process takes seconds of CPU
// (reading libtorch's symbols), several at once on a node's cores.
constexpr double kStacksBudgetS = 20;
// The job's DDPCTL_STACKS_BUDGET ("60", "2m") where gdb needs longer (large
// CUDA processes, busy nodes), else kStacksBudgetS; a value that is no
// duration is said on stderr and the default used (the agent's errors never
// stop the job or its watch).
double stacks_budget(const Environment& env);

// `job sample`: a sample every `interval_s` appended to the node's usage
// file (<log base>.usage.<node>.jsonl); between samples, every half second,
// the watchdog's request for stacks is answered. Until killed, `count`
// samples, or (with `parent_pid`) until that process is no longer its parent.
struct SampleOptions {
  std::string log_base;
  std::string proc_root = "/proc";
  double interval_s = 5;
  int count = 0;  // 0: until killed
  // The step's task that started it in the background, then became the
  // program by exec. When the program ends the sampler is an orphan, and
  // under proctrack/linuxproc Slurm no longer counts it as the job's: it
  // would sample on for ever. 0: not watched (a step of its own).
  long parent_pid = 0;
  long ticks_per_s = 100, page_size = 4096;
};
void run_sampler(const SampleOptions& o, Context& ctx);

struct WatchOptions {
  std::string log_base;  // <output_dir>/<job name>_<job id>
  std::string job_id;
  std::string slurm_id;  // what it requeues or cancels (JobPlace); empty: job_id
  int attempt = 0, max_restarts = 0;
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
  void save();         // the record, atomically; a failure is reported, not thrown
  void gather_stacks(double now);
  // An in-job restart's step: its first progress (the progress file, else
  // the pattern), where the program trains again, kept beside the in-job record.
  void note_resumed(double now);
  // In-job restarts: the step's latest progress (the progress file's or
  // pattern's), rewritten as it advances, where report's time lost of a
  // restart begins (in_job_progress_path).
  void note_progress(const StallVerdict& v);
  // The Flight Recorder's dumps of the ranks the samplers asked (their
  // stacks files say which), into the record; its verdict when the stacks
  // name no culprit.
  void gather_flight_recorder(const std::map<int, FileId>& before, const CulpritVerdict* stacks);
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
  // The act requeue_ and restart_ choose (a requeue past max_restarts cancels).
  StallAction act_taken() const { return restart_ ? StallAction::Restart : requeue_ ? StallAction::Requeue : StallAction::Cancel; }
  int tries_ = 0;         // of the action, when it fails (a few, an interval apart)
  double started_at_ = 0;
  bool resumed_noted_ = false;
  double progress_noted_ = 0;
};

// `job watch`: a tick every interval until the watcher is done, or the step
// (o.step_pid) has ended. The job's id and attempt come from ctx.env.
void run_watch(WatchOptions o, Context& ctx);

// `job check`: this node's check (node_check.hpp) from the options and
// Slurm's variables, recorded in <log base>.restart<A>.check.<node>.json.
struct NodeCheckRequest {
  std::string log_base, master_addr, master_host, interface;
  int master_port = 0, nodes = 1;
  int gpus = -1;                // -1: SLURM_GPUS_ON_NODE
  long long min_free_mib = -1;  // -1: half of SLURM_MEM_PER_NODE, else 256
  double deadline_s = 10;
  std::string proc_root = "/proc";
};
NodeCheckResult run_node_check(const NodeCheckRequest& r, Context& ctx);
// `job checked`: every node's record of this attempt, and what to do.
CheckDecision read_node_checks(const std::string& log_base, const std::vector<std::string>& nodes, int max_restarts,
                               Context& ctx);

// `job step-ended` (restart:, launch.sh): the training step failed; what
// failed (srun's lines in the batch log since the step's marker, Slurm's
// node states, the node check's records), the decision (in_job_restart.hpp),
// recorded in <log base>.restart<N>.in-job.json before the batch shell acts
// on it. The node check records of the next step's nodes are removed, so
// that a node that cannot check again is not read as its old success.
struct StepEndedOptions {
  std::string log_base;
  std::vector<std::string> nodes, spares;
  int restarts_done = 0, max_in_job = 0, max_requeues = 0, step_rc = 1;
  int full_nodes = 0, min_nodes = 0;  // the shape's nodes, restart.min_nodes (0: no shrink)
  bool tasks_are_ranks = false;
  bool check_failed = false;  // the node check before the step failed: no step ran
};
RestartDecision on_step_ended(const StepEndedOptions& o, Context& ctx);
// `job step-started`: the restart `number` has started its step (the record after the act).
void on_step_started(const std::string& log_base, int number, Context& ctx);

// `job stacks`: this node's training processes' stacks into their file; its path.
std::string record_stacks(const std::string& log_base, const std::string& proc_root, double budget_s, Context& ctx);

// `job environment`: the attempt's record (job_environment.hpp) into its file.
JobEnvironment record_environment(const std::string& log_base, const EnvironmentOptions& o, Context& ctx);

// The ranks' stacks on this node: py-spy dump where it is on PATH, else gdb
// (thread apply all bt), the dumps of several processes at once; the text
// for <log base>.restart<A>.stacks.<node>.txt. With `log_base`, the bundled
// trainer's workers (comm ddp-train, with a RANK) are asked first where they
// are: SIGQUIT, answered in <log_base>.state.<pid>.txt
// (trainer/state_dump.hpp); only on the real /proc. With `fr_pipe_stem`
// (TORCH_NCCL_DEBUG_INFO_PIPE_FILE), before anything else, every rank's
// Flight Recorder is asked for a dump through its pipe, and the text says
// which were (flight_recorder_pipe.hpp).
std::string dump_stacks(CommandRunner& runner, Clock& clock, const std::string& proc_root, const JobMatch& job,
                        double budget_s, const std::string& log_base = "",
                        const std::string& fr_pipe_stem = "");
std::string stacks_path(const std::string& log_base, int attempt, const std::string& node);
// Opens the log folder: on NFS that revalidates its cached entries, so that a
// file another node just created is seen (negative lookups are cached).
void revalidate_folder(const std::string& log_base);
// Written by the watchdog; each node's sampler answers with its stacks file.
std::string stacks_request_path(const std::string& log_base, int attempt);

// The newest step of job `job_id` that `squeue -s` lists (the training
// step: the batch shell runs one at a time), from "812.3" or "812_4.3"
// lines; "" for none. `job_id` is an array task's <array>_<index>.
std::string newest_step(const std::string& squeue_steps);
// Ends the job's training step with SIGKILL (`scancel --signal=KILL
// JOB.STEP`) for watchdog.action restart; `step` gets its id. nullopt on success.
std::optional<std::string> end_training_step(CommandRunner& runner, const std::string& job_id, std::string* step);

// Requeues the job from inside it; with `exclude`, the job leaves its queue
// excluding those nodes (requeuehold, update ExcNodeList, release: Slurm
// takes ExcNodeList only from a pending job). nullopt on success.
std::optional<std::string> requeue_job(CommandRunner& runner, const std::string& job_id,
                                       const std::vector<std::string>& exclude);

}  // namespace ddpctl
