#pragma once
// The command line: one entry point, one table of subcommands, one catch.
#include <CLI/CLI.hpp>

#include "slurm/context.hpp"

namespace ddpctl::cli {

// Exit codes: 0 success, 1 a problem with the user's input or environment
// (printed as `ddpctl: error: ...`), 2 a usage error, 3 an internal error.
// The job agent's verdicts have their own (job_contract.hpp's AgentVerdict).
enum ExitCode { kOk = 0, kUserError = 1, kUsage = 2, kInternal = 3 };

int run(int argc, char** argv);

// One per subcommand, each in its own file: its options, a call into the
// core with `ctx` (the one SlurmClient, made in app.cpp), and printing.
void setup_gen(CLI::App& app, Context& ctx);
void setup_submit(CLI::App& app, Context& ctx);
void setup_race(CLI::App& app, Context& ctx);
void setup_race_again(CLI::App& app, Context& ctx);
void setup_race_gate(CLI::App& app, Context& ctx);
void setup_race_checkpoint(CLI::App& app, Context& ctx);
void setup_coordinate(CLI::App& app, Context& ctx);
void setup_sweep(CLI::App& app, Context& ctx);
void setup_report(CLI::App& app, Context& ctx);
void setup_plan(CLI::App& app, Context& ctx);
void setup_status(CLI::App& app, Context& ctx);
void setup_cancel(CLI::App& app, Context& ctx);
void setup_logs(CLI::App& app, Context& ctx);
void setup_events(CLI::App& app, Context& ctx);
void setup_schema(CLI::App& app, Context& ctx);
void setup_tune(CLI::App& app, Context& ctx);
void setup_calibrate(CLI::App& app, Context& ctx);
void setup_diff(CLI::App& app, Context& ctx);
void setup_container(CLI::App& app, Context& ctx);
void setup_init(CLI::App& app, Context& ctx);
void setup_doctor(CLI::App& app, Context& ctx);
void setup_fetch(CLI::App& app, Context& ctx);
// The job agent the sbatch script runs on the nodes (hidden).
void setup_job(CLI::App& app, Context& ctx);
// completion bash|zsh, and the hidden __complete and __man (docs.cpp).
void setup_docs(CLI::App& app, Context& ctx);

}  // namespace ddpctl::cli
