#pragma once
// The job's side of a run's events (runs/events.hpp): what the agent saw
// happen, written into the run's log (DDPCTL_RUN_DIR, which ddpctl's
// submit sets) with where it happened: the job, its attempt, the node, the
// grid's cell. A job ddpctl did not submit (no DDPCTL_RUN_DIR) writes none;
// an event that cannot be written is said on stderr, never the job's
// failure.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/environment.hpp"
#include "runs/events.hpp"

namespace ddpctl {

struct JobEventSource {
  std::string run_dir;  // "": nothing is written
  nlohmann::json keys = nlohmann::json::object();  // job, attempt, node, cell
};
// From Slurm's environment and ddpctl's (SLURM_JOB_ID or an array task's
// A_i, SLURM_RESTART_COUNT, SLURMD_NODENAME, DDPCTL_CELL).
JobEventSource job_event_source(const Environment& env);

// Appends `type` with the source's keys and `fields`; false (and a line on
// stderr) when it could not be written.
bool job_event(const JobEventSource& s, EventType type, const nlohmann::json& fields);
// As job_event, written once per `once_key` in the run (several nodes see
// the same fact).
bool job_event_once(const JobEventSource& s, const std::string& once_key, EventType type,
                    const nlohmann::json& fields);

// The once-key of an attempt's `preempted`: the script (its requeue after
// preemption) and the first node's sampler (Slurm's PreemptTime at
// SIGTERM) may both see it.
std::string preempted_once_key(const JobEventSource& s);

// `ddpctl job event TYPE KEY=VALUE...`: the job script's own events (a
// race's claim won or lost, a requeue and why). KEY is a-z and _; "nodes"
// and "taken" are lists (split at spaces and commas); "generation",
// "restart", "step" and "rank" are integers; the others are strings as
// given. A UserError for an unknown type or a malformed word.
void job_event_from_words(const Environment& env, const std::string& type, const std::vector<std::string>& words);

// What the training itself says, as events: the metrics file's new lines
// (each a `metric` event), the progress file at most one `progress` event
// every `progress_every_s` when it moved, and `resumed` once the bundled
// trainer says in task 0's log which checkpoint it resumed. Run by the
// first node's sampler; reads only what was appended since it started
// (earlier attempts' lines were said by their own).
struct TrainingFiles {
  std::string progress, metrics;  // DDPCTL_PROGRESS_FILE, DDPCTL_METRICS_FILE
  std::string step_log;           // task 0's log of this attempt ("": no resumed event)
  std::string once;               // what makes `resumed` once per step: "JOB.ATTEMPT.STEP"
  // Where this step's metric lines begin (DDPCTL_METRICS_FROM, the file's
  // size when the script started the step; -1: its size when the sampler
  // starts, which a fast program may already have written past).
  long long metrics_from = -1;
};
class TrainingEvents {
 public:
  TrainingEvents(JobEventSource source, TrainingFiles files, double progress_every_s = 60);
  void tick(double now);

 private:
  void metrics();
  void progress(double now);
  void resumed();
  static constexpr long long kResumeLookBytes = 1 << 20;
  JobEventSource source_;
  TrainingFiles files_;
  double every_s_;
  long long metrics_offset_ = 0, step_log_offset_ = 0;
  double next_progress_ = 0;
  long long last_step_ = -1;
  int last_epoch_ = -1;
  long long resume_read_ = 0;  // of the step log, looking for the trainer's "resumed from"
  bool resume_looked_ = false;
};

}  // namespace ddpctl
