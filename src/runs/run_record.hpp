#pragma once
// A run as recorded: its shapes (run.json) and every sbatch attempt (the
// ledger, ledger.hpp). Plain types; runs.hpp stores and finds them. Model
// layer (docs/architecture.md).
#include <optional>
#include <string>
#include <vector>

#include "slurm/slurm_job.hpp"
#include "spec/peak_flops.hpp"
#include "spec/run_spec.hpp"

namespace ddpctl {

// What became of one sbatch attempt, as the ledger records it.
enum class Outcome {
  Intent,       // recorded before sbatch; sbatch may be running, or ddpctl died before the outcome
  Submitted,    // a job was made (job_id)
  Rejected,     // sbatch refused it; no job
  Unconfirmed,  // sbatch's answer was ambiguous: a job may or may not exist
  Absent,       // an intent or unconfirmed attempt that Slurm was later shown not to have
};
// "intent", "submitted", ... as in ledger.json.
const char* outcome_name(Outcome outcome);
// The ledger's word for an outcome; nullopt for a word ddpctl never wrote.
std::optional<Outcome> parse_outcome(const std::string& name);

struct Attempt {
  std::string token;   // unique; the job's --comment is "ddpctl:<token>"
  std::string shape;   // shape label
  std::string script;  // file name inside the run directory
  std::vector<std::string> argv;
  std::string intent_at;  // UTC, ISO 8601
  Outcome outcome = Outcome::Intent;
  std::string job_id, cluster, reason, decided_at;
  std::string cancel_requested_at;
  int pid = 0;       // the ddpctl that ran sbatch, and its host: while it
  std::string host;  // lives, its attempt is in flight, never absent
  std::optional<JobEnd> end;  // the job's end, once final (JobEnd); Slurm is not asked again
  // A job array of a grid's cells (grid.hpp): the --array value, e.g.
  // "0-3%2" or "3,7,9"; each task index is a cell's index. Empty: one job.
  std::string array;
  // Task N of the array runs cell N + array_offset: arrays split below the
  // site's MaxArraySize (the array script's $1).
  int array_offset = 0;
  // One shape's job of a raced grid's first cell (race-then-sweep,
  // docs/race.md): only the race's winner among them runs the cell.
  bool race = false;
  std::vector<int> array_cells() const;  // the cells its --array names
  // Its cells' ends, once final (a task's record, array_task_id its cell);
  // `end` is set too when every cell of the array has one.
  std::vector<JobEnd> task_ends;
  const JobEnd* task_end(int cell) const;

  bool settled() const {
    return outcome == Outcome::Submitted || outcome == Outcome::Rejected || outcome == Outcome::Absent;
  }
};

struct RunShape {
  std::string label, job_name, script, partition;
  std::string spec_file, output_dir;  // absolute; a race of several specs has one per shape
  int nodes = 1, gpus_per_node = 0, ranks_per_node = 1;
  bool per_gpu = false;
  long long time_s = 0;
  int max_requeues = 0;  // requeue.max_restarts (0: no requeue, or a record from before it was kept)
  std::optional<ProgressSpec> progress;  // the spec's progress: section
  std::optional<MetricSpec> metric;      // the spec's metric: section
  std::string comment;  // the spec's comment:, after ddpctl's token in the job's --comment
  // The peak of the devices its ranks run on, as the profile gave it when
  // the run was made (report's MFU, explain/mfu.hpp): one GPU's (its
  // gpu_type's) with GPUs, else one node's CPUs' (its partition's).
  std::string gpu_type;            // the spec's ("" for CPUs or an untyped GPU)
  std::optional<PeakTflops> peak;  // none: the profile gives none
  std::string peak_from;           // "gpu_types.a100.peak_tflops in FILE"
};

// One cell of a grid (grid.hpp) as the sweep recorded it (grid.json).
struct RunCell {
  int index = 0;
  std::string name;    // "lr=0.01,seed=2"
  std::string shape;   // the label of the array (RunShape) it runs in
  std::string dir;     // its own folder (absolute): DDPCTL_CELL_DIR
  std::vector<std::pair<std::string, std::string>> values;  // key path -> value as the name shows it
};
struct RunGrid {
  std::vector<std::pair<std::string, std::string>> keys;  // path, name (as cell names show it)
  std::optional<int> max_parallel;
  std::vector<RunCell> cells;  // by index
  // Race, then sweep (docs/race.md): cell 0 raced the spec's alternatives
  // (one array per shape, --array=0); the first to start won, and the other
  // cells go as an array on its shape. Until then their `shape` is empty.
  bool raced = false;
};

struct Run {
  std::string dir;  // absolute
  std::string id;   // the directory's name
  std::string name, cluster, spec_file, spec_hash, created_at, cwd, output_dir;
  // The creation's nanoseconds since the epoch: orders runs made in the same
  // second (created_at has seconds); 0 in records from before it.
  long long created_ns = 0;
  std::string ddpctl_version;  // the ddpctl that submitted it ("" before runs recorded it)
  std::vector<std::string> overrides;
  std::vector<RunShape> shapes;
  std::vector<Attempt> attempts;
  std::optional<RunGrid> grid;  // a sweep of a grid: its cells, one array per shape

  const RunShape* shape(const std::string& label) const;
  // The latest attempt that made a job, if any.
  const Attempt* latest_job() const;
};

// The attempt of `run` that made job `job_id`, or null.
const Attempt* job_attempt(const Run& run, const std::string& job_id);

}  // namespace ddpctl
