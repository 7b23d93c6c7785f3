#pragma once
// Joins a run spec with its cluster profile: checks the spec against the
// site's partitions and GPU types, and computes what each script asks Slurm for.
#include <optional>
#include <string>
#include <vector>

#include "spec/cluster_profile.hpp"
#include "spec/grid.hpp"
#include "script/container.hpp"
#include "script/snapshot.hpp"
#include "spec/run_spec.hpp"

namespace ddpctl {

struct ResolvedShape {
  Shape asked;  // the shape as the spec wrote it: its fields' locations for messages
  std::string label;
  std::string job_name;
  std::string script_name;  // file name of the rendered script
  std::string partition;    // may be empty: the cluster's default partition
  bool partition_requested = false;  // a --partition line is written (not the site's implicit choice)
  // The GPU type as Slurm knows it: a GRES type (gres, gpus-per-node
  // dialects) or a node feature (constraint dialect); empty when untyped.
  std::string gpu_gres, gpu_feature;
  int nodes = 1;             // the training step's
  int spares = 0;            // restart.spares: asked for beside `nodes`, idle until one fails
  int gpus_per_node = 0;
  int ranks_per_node = 1;
  int tasks_per_node = 1;  // srun tasks: 1 launcher (per-node) or one per rank (per-gpu)
  std::optional<int> cpus_per_task;
  long long time_s = 0;
  std::vector<std::string> directives;  // "--nodes=1", ... one per #SBATCH line

  int world_size() const { return nodes * ranks_per_node; }
};

struct ResolvedRun {
  RunSpec spec;
  ClusterProfile profile;
  std::vector<ResolvedShape> shapes;
  std::vector<std::string> modules;  // the profile's, then the spec's
  EnvList env;                       // the profile's, overridden by the spec's
  EnvList nccl_env;                  // NCCL/Torch variables, profile then spec
  std::string master_interface;      // empty: resolve the first node's hostname
  std::string trainer_program;       // the trainer's program: the spec's, else default_trainer_program()
  // The code the jobs run (apply_snapshot, at submit); none for `gen`.
  std::optional<Snapshot> snapshot;
  std::string snapshot_off;          // why there is none, when submit took none
  std::optional<ResolvedContainer> container;  // what the program runs in (container.hpp); none: the node itself
  // A big grid's shared script (resolve_grid.hpp): the shell word of the
  // cells' table its env: is read from, by the cell's index ($1); empty:
  // env: is in the script.
  std::string env_table;
};

// Throws UserError listing every problem.
ResolvedRun resolve_run(RunSpec spec, ClusterProfile profile);

// Loads the spec, finds and loads its profile, and resolves them. A path
// that could not be written into a script safely is refused first.
// `site`: read at that site (spec.hpp's load_run_spec).
ResolvedRun load_and_resolve(const std::string& spec_path, const std::vector<std::string>& overrides,
                             const std::string& site = "");

// Makes `run` run `decision`'s snapshot: kept in run.snapshot (the script
// exports it), the command's words as snapshot_argv makes them, and
// output_dir, trainer.data and trainer.checkpoint_dir absolute (the submit
// folder's): the job works in the run's view of the snapshot.
void apply_snapshot(ResolvedRun& run, const SnapshotDecision& decision, const std::string& cwd);

// DDPCTL_CHECKPOINT_DIR, the folder a program keeps its checkpoints in
// across in-job restarts, requeues and re-races (docs/running.md "When a
// rank or node is lost"): the bundled trainer's trainer.checkpoint_dir, else
// <run_folder>/checkpoint, where run_folder is the run's (or the grid
// cell's) own folder under output_dir (absolute, but for `gen`). Set once: a second call changes
// nothing. Returns the folder when ddpctl chose it (the caller creates it
// at submit), else "".
std::string set_checkpoint_folder(ResolvedRun& run, const std::string& run_folder);
// DDPCTL_RUN_DIR, the run's own folder in the store (where the job's agent
// appends the run's events, runs/events.hpp), once the run's id is known.
void set_run_dir(ResolvedRun& run, const std::string& run_dir);
// The folder set_checkpoint_folder sets, without setting it; `chosen`: ddpctl chose it.
std::string checkpoint_folder(const ResolvedRun& run, const std::string& run_folder, bool* chosen);
// Creates the folder set_checkpoint_folder chose ("" : nothing to do).
void create_checkpoint_folder(const ResolvedRun& run, const std::string& folder);

// A new time limit for a resolved shape (its --time line too): --fit-time.
void set_time_limit(ResolvedShape& shape, long long seconds);

// The argv that each srun task runs (before the per-task rank prelude).
std::vector<std::string> launch_argv(const ResolvedRun& run, const ResolvedShape& shape);

}  // namespace ddpctl
