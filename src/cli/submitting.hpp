#pragma once
// What `submit` and `race` share: finding earlier runs of the same spec,
// waiting for a job, and the output folder Slurm writes logs into.
#include <optional>
#include <string>
#include <utility>

#include "resolve.hpp"
#include "runs.hpp"
#include "slurm.hpp"

namespace ddpctl::cli {

struct EarlierRuns {
  std::optional<std::pair<std::string, std::string>> active;  // run id, job id still queued or running
  std::optional<Run> retry;  // a run whose every attempt was shown to make no job
};

// Earlier runs with this identity hash: settles their unconfirmed attempts,
// finds a job of theirs still queued or running, and a run to retry in.
EarlierRuns earlier_runs(const std::string& root, const std::string& hash, SlurmClient& slurm);

// Prints the job's state as it changes until it starts (or, with `follow`,
// until it ends, with the trainer's progress); throws if it ends badly.
void wait_for_job(SlurmClient& slurm, const Run& run, const Attempt& attempt, bool follow);

// Slurm writes the jobs' logs there; it must exist before sbatch.
void create_output_dir(const ResolvedRun& resolved);

// "14:05:09" in local time.
std::string clock_time(long long unix_seconds);

}  // namespace ddpctl::cli
