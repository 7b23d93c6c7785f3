#pragma once
// What Slurm says about a set of jobs, from squeue first and sacct for the
// jobs squeue has forgotten; "UNKNOWN" (never "gone") when neither can say.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/clock.hpp"
#include "runs/progress.hpp"
#include "runs/run_record.hpp"
#include "slurm/slurm.hpp"
#include "base/text.hpp"  // format_duration, which status and its callers use beside these

namespace ddpctl {

struct JobStates {
  std::map<std::string, Job> jobs;  // by id; every id asked for is present
  bool queue_answered = false;
  std::string error;  // why squeue (or sacct) could not be asked
  // Ended for good (JobEnd): squeue answered without them and sacct says
  // they ended. A job squeue still lists may yet be requeued: never here.
  std::set<std::string> final;
  // The jobs sacct answered for (who cancelled them, how they exited):
  // nothing more to ask of it in this refresh.
  std::set<std::string> accounted;
  // sacct's earlier attempts of the jobs it answered for (requeues).
  std::map<std::string, std::vector<Job>> earlier;
  // lookup_run_jobs: the ends the ledgers hold or just recorded, by id.
  std::map<std::string, JobEnd> ends;
  std::vector<std::string> notes;  // what could not be recorded, and so is asked again
};

// squeue for every job asked (SlurmClient::jobs, in chunks), then ONE sacct
// (SlurmClient::attempts, with every record of each job) for the jobs squeue
// no longer lists and the ended ones it does not say enough about.
JobStates lookup_jobs(SlurmClient& slurm, const std::vector<std::string>& ids);

// lookup_jobs for the jobs of `runs` (and any other id), with their ledgers:
// a job whose end a ledger holds is answered from it (source "ledger") and
// Slurm is not asked; a job Slurm shows ended for good for the first time
// (`final`) is recorded in its run's ledger with what explaining its end
// needs (earlier attempts, a NODE_FAIL's node states: one sinfo for all).
// A ledger that cannot be written is a note, not an error. `now` stamps the
// records. The runs' attempts are re-read by the recording: pointers into
// them do not survive this call.
JobStates lookup_run_jobs(SlurmClient& slurm, std::vector<Run>& runs, const std::vector<std::string>& ids,
                          long long now);

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
