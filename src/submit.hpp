#pragma once
// Submission: preflight against the live cluster, the ledgered sbatch call,
// and settling attempts whose outcome is unknown by looking up their token.
#include <string>
#include <vector>

#include "diagnostics.hpp"
#include "resolve.hpp"
#include "runs.hpp"
#include "slurm.hpp"

namespace ddpctl {

// Checks the shape against what Slurm reports (sinfo --json, sacctmgr):
// partition exists, enough nodes with the GPU type, count and CPUs, and the
// account is one of the user's. Problems name the spec's file, line and field.
Diagnostics preflight(const ResolvedRun& run, size_t shape_index, SlurmClient& slurm);

enum class Presence { Found, Absent, Unknown };
struct Lookup {
  Presence presence = Presence::Unknown;
  Job job;          // when Found
  std::string why;  // when Unknown: what could not be asked
};
// Looks for the job carrying `ddpctl:<token>` in squeue, then in sacct.
Lookup find_job_by_token(SlurmClient& slurm, const std::string& token, long long intent_time);

// Settles every attempt of `run` that has no confirmed outcome; saves the ledger
// when anything changed. Returns the attempts it could not settle.
std::vector<Attempt> settle_attempts(Run& run, SlurmClient& slurm);

// sbatch arguments for a shape's script in `run`; `extra` (e.g.
// --dependency=afterany:N) goes before the script.
std::vector<std::string> sbatch_args(const Run& run, const RunShape& shape, const std::string& token,
                                     const std::vector<std::string>& extra = {});

// Records the intent, runs sbatch, records the outcome, and for an ambiguous
// outcome looks the token up once. Returns the final attempt.
Attempt submit_attempt(Run& run, const RunShape& shape, SlurmClient& slurm, const std::vector<std::string>& extra = {});

}  // namespace ddpctl
