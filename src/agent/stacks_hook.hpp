#pragma once
// Stacks from every Python rank with nothing installed (docs/running.md "Who
// hung the job"). ddpctl puts a sitecustomize.py first on the job's
// PYTHONPATH; in every Python process it registers Python's own faulthandler
// on a real-time signal the process leaves at its default, writing into an
// anonymous in-memory file (memfd "ddpctl-stacks-sig<N>"): no output and no
// file until asked. The agent finds that memfd among a process's open files
// (/proc/PID/fd), so it signals only processes that registered (the signal's
// default action would kill any other), checks the signal is still caught,
// and reads the dump back through /proc/PID/fd/FD. It also gives a Gloo
// rank a Flight Recorder pipe (flight_recorder_pipe.hpp). Then the
// sitecustomize that would have run without ddpctl's runs (Debian's, the user's).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.hpp"

namespace ddpctl {

// SIGRTMIN + 8: not a requeue signal (spec_restart.cpp), not one glibc or
// musl keep for themselves, and the agent writes the number into the hook,
// so the job's Python and the agent agree whatever their C library.
int stacks_signal();

// The hook's text, for signal `sig`.
std::string python_hook_text(int sig);
// Writes <log base>.python/sitecustomize.py (atomically); returns the folder
// the job puts first on PYTHONPATH.
std::string write_python_hook(const std::string& log_base);

// The signal a memfd link names: "/memfd:ddpctl-stacks-sig42 (deleted)" -> 42.
std::optional<int> hook_signal_of_link(const std::string& link);
// Whether /proc/PID/status says the process catches `sig` (SigCgt) and
// neither ignores nor blocks it (SigIgn, SigBlk).
bool signal_caught(const std::string& status_text, int sig);

enum class HookOutcome {
  Dumped,         // its stacks, read back
  NotRegistered,  // no hook among its open files (not Python, no sitecustomize)
  NotCaught,      // registered, but the signal is no longer caught: not sent
  NotSent,        // kill failed (it ended), or not the real /proc
  NoAnswer,       // signalled; nothing came within the wait
};

struct HookDump {
  int pid = 0;
  HookOutcome outcome = HookOutcome::NotRegistered;
  int signal = 0;
  std::string text;  // faulthandler's dump (Dumped)
};
// "faulthandler (signal 42)", or why not: "it did not register for
// faulthandler (not Python, or started without ddpctl's sitecustomize)".
std::string describe_hook_dump(const HookDump& d);

// Signals every registered process among `pids` at once (through `send`,
// kill(2) on the real /proc), then waits up to `wait_s` for each dump: one
// that has grown and stayed the same for a moment is complete (faulthandler
// writes it from the signal handler, at once). Only what was written after
// the signal is read, so a second request reads the second dump.
std::vector<HookDump> ask_python_stacks(const std::string& proc_root, const std::vector<int>& pids, Clock& clock,
                                        double wait_s, const std::function<bool(int pid, int sig)>& send);

}  // namespace ddpctl
