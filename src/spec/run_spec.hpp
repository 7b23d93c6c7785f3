#pragma once
// The run spec as data: one training run as the user describes it in YAML,
// after loading (spec.hpp reads it; resolve.hpp checks it against the
// cluster profile). Plain types only: this header is of the model layer
// (docs/architecture.md) and includes nothing above it.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "spec/fabric_settings.hpp"
#include "spec/container_spec.hpp"
#include "base/diagnostics.hpp"

namespace ddpctl {

using EnvList = std::vector<std::pair<std::string, std::string>>;  // ordered NAME=value

// One job shape: what Slurm is asked for. The spec's own shape is shapes[0];
// each `alternatives:` entry is the base shape with its fields overridden. A
// `sweep:` spec's shapes are its entries alone (the spec's fields their defaults).
struct Shape {
  std::string label;         // "1x4", or the alternative's `label`
  std::string field_prefix;  // "" for the base shape, "alternatives[0]." / "sweep[0]."
  int nodes = 1;
  int gpus_per_node = 0;
  std::optional<int> procs_per_node;  // ranks per node; defaults to gpus_per_node
  std::string gpu_type, partition, account, qos, constraint;
  std::optional<int> cpus_per_gpu, cpus_per_task;
  std::optional<long long> mem_mib;
  std::optional<long long> time_s;
  bool exclusive = false;
  // Where it may run (spec_site.hpp): --reservation, --exclude, --nodelist.
  std::string reservation, exclude, nodelist;
  // The site it is submitted at (spec_sites.hpp): `on:` (the login host, as
  // --on takes it; "" for here) and `remote_dir:`, its own or the spec's.
  std::string host, remote_dir;
  std::map<std::string, Location> where;  // field -> where its value was set

  int ranks_per_node() const { return procs_per_node.value_or(gpus_per_node); }
  int world_size() const { return nodes * ranks_per_node(); }
  std::string field(const std::string& name) const { return field_prefix + name; }
  Location where_of(const std::string& name, const Location& fallback) const;
};

enum class LaunchMode { PerNode, PerGpu };

// Typed NCCL/Torch settings; unset entries are not exported. The same section
// appears in cluster profiles (site defaults) and in run specs (overrides).
struct NcclSettings {
  std::map<std::string, std::string> values;  // yaml key -> value as exported
  EnvList extra;                              // nccl.extra: other NCCL_* variables
};

struct MasterSettings {
  std::optional<std::string> interface;  // unset: the profile's; "" : resolve the hostname
  int port_min = 20000, port_max = 29999;
};

struct RequeueSettings {
  std::string signal = "USR1";
  int grace_s = 300;
  int max_requeues = 3;  // requeue.max_restarts: the spec keeps Slurm's word (its Restarts count)
  Location where;
  std::optional<Location> grace_where;  // where the spec set grace (unset: the default)
};

// restart: the training step started again inside the allocation when it
// fails (docs/running.md "When a rank or node is lost"): up to `in_job` times,
// on `nodes` of the job's `nodes + spares` nodes, leaving out the failed ones.
struct RestartSettings {
  int in_job = 0;  // restarts of the step within one attempt of the job
  int spares = 0;  // nodes asked for beyond the shape's, to take a failed node's place
  // The fewest nodes a restarted step may run on when no spare is left
  // (restart.min_nodes; 0: not set, the step never shrinks).
  int min_nodes = 0;
  Location where;
};

// Progress for a program ddpctl did not write (progress_read.hpp applies
// it): a regular expression with named groups, run over the rank-0 log.
struct ProgressSpec {
  std::string preset;        // the bundled pattern it came from, if any
  std::string pattern;       // named groups: epoch, epochs, step, steps, loss, samples_per_s, it_per_s
  std::string file = "rank0";  // rank0: task 0's step log; batch: the batch log
  std::optional<int> epochs;   // when the lines do not say
  int epoch_base = 1;          // 0 when the program counts epochs from 0 (Lightning)
};

// Final metrics for a program ddpctl did not write (metric_pattern.hpp):
// regular expressions whose named groups are metrics, the last match of
// each in the rank-0 log its value (`report` of a grid's sweep).
struct MetricSpec {
  std::vector<std::string> patterns;
  std::string file = "rank0";  // rank0: task 0's step logs; batch: the batch log
};

// While it runs (docs/running.md): the job agent's samples and node check
// (`monitor:`), and the stall watchdog (`watchdog:`).
struct MonitorSettings {
  bool enabled = true;     // monitor: false turns samples, node check and watchdog off
  int interval_s = 5;      // between samples and watchdog observations
  bool node_check = true;  // the check before the training step
  int check_timeout_s = 10;
};
struct WatchdogSettings {
  bool enabled = true;            // watchdog: false turns it off
  long long stall_after_s = 1800;  // no progress this long is a stall
  std::string action = "warn";    // warn, cancel, requeue
  // A rank below 0.7× the others this long is named slow (straggler.hpp).
  static constexpr long long kSlowAfterDefault = 300;
  long long slow_after_s = kSlowAfterDefault;
  bool exclude_slow = false;      // its node is left out of the job's next attempt
  Location where;
};

// snapshot: the code the jobs run, frozen at submit (snapshot.hpp).
struct SnapshotSettings {
  enum class Mode { Auto, Off, Git, Paths };
  Mode mode = Mode::Auto;  // Auto: a git work tree's files where there is one, else none
  std::vector<std::string> paths, exclude;  // Paths: what to copy; both: git pathspecs left out
  long long max_bytes = 200LL << 20;        // snapshot.max_mb
  Location where;
};

// The sbatch options a site's users pass besides the shape (spec_site.hpp),
// and `sbatch:`, the escape hatch for the rest.
struct SiteOptions {
  std::string dependency, begin, mail_user, hint, comment;
  std::vector<std::string> mail_type;
  bool hold = false;
  // `sbatch:` entries in file order: option name without dashes -> value
  // ("" for a flag given as `true`).
  std::vector<std::pair<std::string, std::string>> sbatch;
  std::map<std::string, Location> where;  // "sbatch.NAME" -> the entry's place
};

struct RunSpec {
  std::string file;
  std::string name;
  std::string cluster;
  std::string output_dir = "logs";
  std::vector<Shape> shapes;  // [0] = the spec's shape, then each alternative
  bool has_alternatives = false;
  bool has_sweep = false;  // `sweep:`: shapes are the sweep's entries, one run each
  bool has_grid = false;   // `grid:`: a grid of cells (grid.hpp), one array per shape
  bool several_shapes() const { return has_alternatives || has_sweep; }
  // Sites (spec_sites.hpp): some shape names a login host with `on:`; and,
  // for a spec read at one site (--site), that site: only its shapes are here.
  bool names_sites = false;
  std::string at_site;

  LaunchMode launch = LaunchMode::PerNode;
  // Exactly one of these: the bundled trainer, or the user's command.
  bool uses_trainer = false;
  std::string trainer_program = "ddp-train";
  bool trainer_program_given = false;         // trainer.program set (else paths.hpp's default)
  std::vector<std::string> trainer_args;      // "--epochs=3" ...
  // trainer.batch_size and trainer.global_batch as numbers: every shape's
  // world size must divide the global batch into whole micro-batches.
  std::optional<long long> trainer_batch_size, trainer_global_batch;
  std::vector<std::string> command_argv;      // command: [prog, arg...]
  std::optional<std::string> command_shell;   // command: "shell line"

  std::vector<std::string> modules;
  EnvList env;
  NcclSettings nccl;
  std::vector<std::string> setup;  // the user's shell lines, verbatim
  MasterSettings master;
  std::optional<RequeueSettings> requeue;
  std::optional<RestartSettings> restart;
  std::optional<ProgressSpec> progress;
  std::optional<MetricSpec> metric;
  MonitorSettings monitor;
  WatchdogSettings watchdog;
  FabricCheckSettings fabric_check;  // fabric_check: (fabric_settings.hpp)
  SnapshotSettings snapshot;
  ContainerSettings container;  // merged with the profile's in container.hpp
  SiteOptions site;
  std::optional<std::string> trainer_data;  // trainer.data as written (a folder, or "synthetic")
  bool trainer_resume = false;

  std::map<std::string, Location> where;  // top-level field -> location
  Location where_of(const std::string& field) const;
};

}  // namespace ddpctl
