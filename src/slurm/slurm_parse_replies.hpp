#pragma once
// Reading sbatch's replies: --parsable's job id, --test-only's estimate.
#include "slurm/slurm_job.hpp"
#include "base/process.hpp"

namespace ddpctl {

// Judges sbatch --parsable by its exit status and stdout, never by stderr
// being empty: sbatch retries on EAGAIN and says so on stderr.
SbatchResult parse_sbatch_result(const CommandResult& r);

// Reads the answer of `env SLURM_TIME_FORMAT=%s sbatch --test-only ...`
// (slurm_job.hpp says what it answers);
// the start time may also be ISO 8601 local time (YYYY-MM-DDTHH:MM:SS).
StartEstimate parse_test_only(const CommandResult& r);

}  // namespace ddpctl
