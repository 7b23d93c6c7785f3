#pragma once
// The one way ddpctl runs an external command (sbatch, squeue, scancel, sinfo,
// sacct, scontrol): an argv, never a shell string, with a time limit.
// End-to-end tests inject faults by putting fake commands first on PATH; unit
// tests of the workflows' decisions pass a scripted runner
// (tests/unit/fake_runner.hpp) in place of SystemCommandRunner.
#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace ddpctl {

struct CommandResult {
  std::vector<std::string> argv;
  int exit_code = -1;    // -1 unless it exited
  int term_signal = 0;   // the signal that ended it, if one did
  bool timed_out = false;
  bool not_found = false;  // the program is not on PATH (or not executable)
  // Run on another host (SshRunner) and the connection failed: the command
  // may not have run, or run and not answered; unknown, as after a timeout.
  bool connection_failed = false;
  // It printed more than the runner keeps of stdout or of stderr (64 MiB)
  // and was stopped there: it did not exit (exit_code -1), and `out` and
  // `err` hold only their start. An answer that can be that large goes to a
  // file instead (run_to_file: what fetch brings).
  bool output_cut = false;
  std::string out;
  std::string err;

  bool ok() const { return exit_code == 0; }
  // "squeue exited with status 1: <first stderr line>" and the like.
  std::string describe() const;
  // describe() and, on the lines after it, the rest of what the command
  // said (its stderr, else its stdout), each line cleaned as plain text:
  // for an error the user must act on (git's list of ignored paths).
  std::string describe_whole() const;
};

// How much of a command's stdout run_to_file writes: at most `max_bytes`
// (-1: no bound but the disk's); with `from_first_line`, the stream's first
// line (at most 256 bytes, its newline included in what is written) says
// what the whole may be, and the bound becomes what it returns for it (-1:
// the line is not what was asked for: stop at once). Past the bound the
// command is killed and the result says output_cut.
struct StdoutBound {
  long long max_bytes = -1;
  std::function<long long(const std::string& first_line)> from_first_line;
};

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  // Runs argv[0] found on PATH; stdin is /dev/null. On timeout the command's
  // process group is killed and timed_out is set. It is killed too, with
  // output_cut set, when its stdout or stderr passes what the runner keeps
  // (64 MiB): output is never cut silently.
  virtual CommandResult run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) = 0;
  // As run, with stdout streamed into the file `file` (created or
  // truncated; `out` stays empty) within `bound`: an answer that can be
  // larger than memory (what fetch brings, a checkpoint). This default runs
  // run() and writes its `out` (test doubles); SystemCommandRunner streams.
  virtual CommandResult run_to_file(const std::vector<std::string>& argv, const std::string& file,
                                    std::chrono::milliseconds timeout, const StdoutBound& bound);
};

// The bound `bound` sets for a stream whose first bytes are `head` (at
// least its first line, or 256 bytes of it): -1 for none, -2 when its first
// line is refused.
long long stdout_limit(const StdoutBound& bound, const std::string& head);

// Runs commands as child processes (fork, exec), capturing stdout and stderr.
// A child is killed if ddpctl dies (PR_SET_PDEATHSIG): no sbatch outlives an
// interrupted or killed ddpctl to submit a job nobody records.
class SystemCommandRunner : public CommandRunner {
 public:
  CommandResult run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) override;
  CommandResult run_to_file(const std::vector<std::string>& argv, const std::string& file,
                            std::chrono::milliseconds timeout, const StdoutBound& bound) override;
};

}  // namespace ddpctl
