#pragma once
// Reading what a job's tasks left behind: where its logs are, which lines
// belong to the latest attempt, the line of a task's log that says what went
// wrong (the bundled trainer's error, a Python traceback's exception, a shell's
// "command not found"), and torchrun's root-cause block. failure.hpp turns
// these readings into an explanation.
#include <optional>
#include <string>
#include <vector>

#include "slurm/slurm_job.hpp"
#include "runs/run_record.hpp"

namespace ddpctl {

// The batch log of a job: <output_dir>/<job name>_<job id>.
std::string log_base(const RunShape& shape, const std::string& job_id);
// The highest attempt (the N of .restart<N>.) with a step log of task 0, or -1 (none yet).
int latest_logged_attempt(const std::string& log_base);

// The lines of the latest attempt: after the last "ddpctl: job N (...) attempt K" line.
std::vector<std::string> latest_attempt(std::vector<std::string> lines);
// "Killed" -> 9, "Segmentation fault" -> 11: srun's words for a task's signal.
std::optional<int> signal_named(const std::string& words);
// The line of a task's log that says what went wrong. With `tag` (torchrun's
// "[default1]:" for the local rank that failed first), that rank's lines
// where the log tells ranks apart.
std::string meaningful_line(const std::vector<std::string>& raw, const std::string& tag = "");
// Lines Slurm adds to a task's log (srun's, slurmstepd's, "*** JOB ..."), not the program's.
bool is_noise(const std::string& line);
// Whether a task's log shows it failed only because another rank did.
bool failed_as_consequence(const std::vector<std::string>& lines, const std::string& meaningful);

// torchrun's "Root Cause (first observed failure)" block, where a log has one.
struct TorchrunRootCause {
  std::optional<int> rank, local_rank;
  std::string node;
  std::optional<ExitStatus> exit;
};
TorchrunRootCause read_torchrun_root_cause(const std::vector<std::string>& lines);

}  // namespace ddpctl
