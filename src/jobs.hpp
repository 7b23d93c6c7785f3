#pragma once
// What Slurm says about a set of jobs, from squeue first and sacct for the
// jobs squeue has forgotten; "UNKNOWN" (never "gone") when neither can say.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "clock.hpp"
#include "progress.hpp"
#include "slurm.hpp"
#include "text.hpp"  // format_duration, which status and its callers use beside these

namespace ddpctl {

struct JobStates {
  std::map<std::string, Job> jobs;  // by id; every id asked for is present
  bool queue_answered = false;
  std::string error;  // why squeue (or sacct) could not be asked
};

JobStates lookup_jobs(SlurmClient& slurm, const std::vector<std::string>& ids);

// For polling loops: a job being requeued passes through an ended state, so
// an end is believed once it has lasted: 1 s, or 10 s for FAILED, CANCELLED,
// NODE_FAIL and PREEMPTED, which a requeue shows while the old step is killed.
class EndWatcher {
 public:
  explicit EndWatcher(Clock& clock) : clock_(clock) {}
  bool ended(const Job& job);

 private:
  Clock& clock_;
  bool seen_ = false;
  double since_ = 0;
};

// The trainer's progress file (progress.hpp), at $DDPCTL_PROGRESS_FILE (the
// sbatch script sets it to progress_path()).
std::string progress_path(const std::string& output_dir, const std::string& job_name, const std::string& job_id);
std::optional<Progress> read_progress(const std::string& path);
// "epoch 2/10 [#####-----] 120/500 1520 img/s ETA 5m40s"
std::string format_progress(const Progress& p, int bar_width = 10);
// "14:05:09": a Unix time on the local clock.
std::string clock_time(long long unix_seconds);

}  // namespace ddpctl
