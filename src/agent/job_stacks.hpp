#pragma once
// `ddpctl job stacks`, and the stacks each node's sampler writes when the
// watchdog asks for them (its request file): the node's training
// processes' stacks, taken the way each process allows (its own Python
// hook, py-spy, gdb), within a budget, into the node's stacks file, which
// the watchdog's culprit decision reads (culprit.hpp).
#include <functional>
#include <string>
#include <vector>

#include "base/clock.hpp"
#include "base/environment.hpp"
#include "base/process.hpp"
#include "agent/sampler.hpp"
#include "slurm/context.hpp"

namespace ddpctl {

// How long a node's dump of its ranks' stacks may take: faulthandler's
// answers come within a second, gdb on a torch process takes seconds of CPU
// (reading libtorch's symbols), several at once on a node's cores.
constexpr double kStacksBudgetS = 20;
// The job's DDPCTL_STACKS_BUDGET ("60", "2m") where gdb needs longer (large
// CUDA processes, busy nodes), else kStacksBudgetS; a value that is no
// duration is said on stderr and the default used (the agent's errors never
// stop the job or its watch).
double stacks_budget(const Environment& env);

// `job stacks`: this node's training processes' stacks into their file; its path.
std::string record_stacks(const std::string& log_base, const std::string& proc_root, double budget_s, Context& ctx);

// The ranks' stacks on this node: py-spy dump where it is on PATH, else gdb
// (thread apply all bt), the dumps of several processes at once; the text
// for <log base>.restart<A>.stacks.<node>.txt. With `log_base`, the bundled
// trainer's workers (comm ddp-train, with a RANK) are asked first where they
// are: SIGQUIT, answered in <log_base>.state.<pid>.txt
// (trainer/state_dump.hpp); only on the real /proc. With `fr_pipe_stem`
// (TORCH_NCCL_DEBUG_INFO_PIPE_FILE), every rank's Flight Recorder is asked
// for a dump through its pipe once the Python ranks' own faulthandler dumps
// are in, before py-spy or gdb, and the text says which were
// (flight_recorder_pipe.hpp). `send` signals a process for its faulthandler
// dump (tests); by default kill(2), on the real /proc only.
using SignalSender = std::function<bool(int pid, int sig)>;
// The bundled trainer's SIGQUIT answers in `files`, each as far as it is
// written: once every one is whole (its handler writes the line in pieces,
// the newline last), or what there is after `wait_s`.
std::vector<std::string> await_trainer_answers(Clock& clock, const std::vector<std::string>& files, double wait_s);
std::string dump_stacks(CommandRunner& runner, Clock& clock, const std::string& proc_root, const JobMatch& job,
                        double budget_s, const std::string& log_base = "",
                        const std::string& fr_pipe_stem = "", const SignalSender& send = {});
std::string stacks_path(const std::string& log_base, int attempt, const std::string& node);
// Written by the watchdog; each node's sampler answers with its stacks file.
std::string stacks_request_path(const std::string& log_base, int attempt);

}  // namespace ddpctl
