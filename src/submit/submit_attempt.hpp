#pragma once
// One ledgered sbatch (docs/architecture.md, "exactly once"): the intent
// recorded before sbatch runs and the outcome after, and attempts whose
// outcome is unknown settled by looking their token up in Slurm.
#include <string>
#include <vector>

#include "runs/run_store.hpp"
#include "slurm/slurm.hpp"

namespace ddpctl {

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

// Adopts jobs carrying the token of an attempt that made none as far as the
// ledger knew (intent, unconfirmed, absent): found in `queue`, it is
// recorded as submitted. Returns how many were adopted.
int adopt_found_jobs(Run& run, const std::vector<Job>& queue);

// Records the intent (with this ddpctl's pid and host), runs sbatch, records
// the outcome, and for an ambiguous outcome looks the token up once. Every
// record is a read-modify-write of the ledger. Returns the final attempt.
// `array`: the --array value (in `extra` too) of a grid's array, recorded;
// `array_offset` goes after the script (its $1: task N runs cell N + offset);
// `race`: a raced grid's first cell (Attempt::race): "race" follows the
// offset, and the array script runs the cell's race script.
Attempt submit_attempt(Run& run, const RunShape& shape, SlurmClient& slurm, const std::vector<std::string>& extra = {},
                       const std::string& array = "", int array_offset = 0, bool race = false);

}  // namespace ddpctl
