#pragma once
// Why a job failed, and where first: read from what it left behind (the
// batch error log with srun's and slurmstepd's lines, each task's step log,
// the bundled trainer's and torchrun's own reports) and from what Slurm says
// (state, exit, nodes). The same words in status, submit --follow, race
// and report. Why a job is on its second attempt: requeue.hpp.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runs/job_states.hpp"
#include "runs/run_record.hpp"
#include "slurm/slurm.hpp"
#include "runs/task_logs.hpp"

namespace ddpctl {

struct Failure {
  std::optional<int> task;  // the srun task that failed first
  std::optional<int> rank;  // its global rank, when known
  std::string node;
  ExitStatus exit;          // how that task (or the job) ended
  std::string what;         // in words: "exited with exit code 2", "reached its time limit", ...
  std::string line;         // its last meaningful line (an error, the exception)
  std::string log;          // the file that line is from
};

// The failure of `job` (of `shape` in a run), for the attempt `attempt`
// (0 = the first); nullopt when the job did not fail. `node_states` (node ->
// Slurm's state, e.g. "down*") names a NODE_FAIL's node.
std::optional<Failure> find_failure(const RunShape& shape, const Job& job, int attempt,
                                    const std::vector<NodeInfo>& node_states = {});

// find_failure with what only Slurm can add, asked only when needed: the
// nodes' states for a NODE_FAIL, and who cancelled a job that squeue (which
// does not say) still shows.
std::optional<Failure> explain_failure(const RunShape& shape, const Job& job, SlurmClient& slurm);
// The same with what a lookup (job_states.hpp) already holds: a recorded end has
// its node states and who cancelled it in the ledger, a job sacct answered
// for has who cancelled it; Slurm is asked only for the rest, and the node
// states at most once per `nodes` cache.
std::optional<Failure> explain_failure(const RunShape& shape, const Job& job, const JobStates& states,
                                       SlurmClient& slurm, std::optional<std::vector<NodeInfo>>* nodes = nullptr);

// "rank 2 (task 1) on g2 exited with exit code 1: ValueError: boom"
std::string describe_failure(const Failure& f);

// The failure as --json shows it: {rank, node, task, exit, signal, what, line, log}.
nlohmann::json failure_json(const Failure& f);

}  // namespace ddpctl
