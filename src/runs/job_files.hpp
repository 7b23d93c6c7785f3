#pragma once
// The files of one job, each named once. They are the contract between the
// job script (templates/), the job agent on the nodes, and status, logs and
// report on the login node: all of them live under the job's log base,
// `<output_dir>/<job name>_<job id>`, and every name below is spelled only
// here. render hands the same names to the templates, with shell words in
// place of the values the script knows only at run time (the job id, the
// attempt, srun's task number %t), so the script and the reader cannot drift.
#include <string>
#include <string_view>

namespace ddpctl::job_files {

// "<job name>_<job id>" and "<output_dir>/<job name>_<job id>".
std::string base_name(std::string_view job_name, std::string_view job_id);
std::string log_base(std::string_view output_dir, std::string_view job_name, std::string_view job_id);

// Slurm's batch log of the job (sbatch --output/--error), as #SBATCH patterns.
std::string batch_out_pattern(std::string_view output_dir);  // <dir>/%x_%j.out
std::string batch_err_pattern(std::string_view output_dir);  // <dir>/%x_%j.err
std::string batch_out(std::string_view base);                   // <base>.out
std::string batch_err(std::string_view base);                   // <base>.err

// Each task's output of one attempt: <base>.restart<N>.<task>.out. The N of
// every .restart<N>. below is the attempt (0 first: SLURM_RESTART_COUNT,
// Slurm's word for a requeue), never an in-job restart: those append to
// their attempt's files.
std::string step_log(std::string_view base, std::string_view attempt, std::string_view task);
std::string step_log(std::string_view base, int attempt, int task);
// The program's progress and metrics files (the bundled trainer writes them).
std::string progress(std::string_view base);  // <base>.progress.json
std::string metrics(std::string_view base);   // <base>.metrics.jsonl
// The job agent's files.
std::string usage(std::string_view base, std::string_view node);  // <base>.usage.<node>.jsonl
std::string usage_prefix(std::string_view base_name);             // "<name>_<id>.usage." of usage()
inline constexpr std::string_view kUsageSuffix = ".jsonl";
std::string stall_record(std::string_view base);                  // <base>.stall.json
std::string slow(std::string_view base);                          // <base>.slow.json: the slow ranks (straggler.hpp)
std::string agent_stderr(std::string_view base);                  // <base>.agent.err
std::string monitor_off(std::string_view base, std::string_view attempt);
std::string monitor_off(std::string_view base, int attempt);      // <base>.restart<N>.monitor-off
std::string agent_error(std::string_view base, std::string_view attempt);
std::string agent_error(std::string_view base, int attempt);      // <base>.restart<N>.agent-error
std::string node_check(std::string_view base, int attempt, std::string_view node);  // .restart<N>.check.<node>.json
std::string fabric(std::string_view base, int attempt);  // .restart<N>.fabric.json: the fabric check (fabric_record.hpp)
// The attempt's in-job restarts (in_job_restart.hpp). Their steps append to
// the attempt's step logs (one file per task across its restarts, each step
// after a line of its own), so the logs' readers need no new names.
std::string in_job_restarts(std::string_view base, int attempt);  // <base>.restart<N>.in-job.json
// The attempt's provenance (provenance.hpp), still in the file name it had
// before that word, so that the records of runs before it read.
std::string provenance(std::string_view base, int attempt);       // <base>.restart<N>.environment.json
std::string stacks(std::string_view base, int attempt, std::string_view node);  // .restart<N>.stacks.<node>.txt
std::string stacks_request(std::string_view base, int attempt);   // <base>.restart<N>.stacks-request
std::string python_hook(std::string_view base);                  // <base>.python: the sitecustomize (stacks_hook.hpp)
std::string state_dump(std::string_view base, std::string_view node, long long pid);  // <base>.state.<node>.<pid>.txt

}  // namespace ddpctl::job_files
