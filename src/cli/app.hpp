#pragma once
// The command line: one entry point, one table of subcommands, one catch.
#include <CLI/CLI.hpp>

namespace ddpctl::cli {

// Exit codes: 0 success, 1 a problem with the user's input or environment
// (printed as `ddpctl: error: ...`), 2 a usage error, 3 an internal error.
enum ExitCode { kOk = 0, kUserError = 1, kUsage = 2, kInternal = 3 };

int run(int argc, char** argv);

// One per subcommand, each in its own file.
void setup_gen(CLI::App& app);
void setup_submit(CLI::App& app);
void setup_race(CLI::App& app);
void setup_sweep(CLI::App& app);
void setup_report(CLI::App& app);
void setup_plan(CLI::App& app);
void setup_status(CLI::App& app);
void setup_cancel(CLI::App& app);
void setup_logs(CLI::App& app);
void setup_doctor(CLI::App& app);

}  // namespace ddpctl::cli
