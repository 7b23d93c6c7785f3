// Python ranks' own stacks (stacks_hook.hpp): which processes get the signal
// (registered, and the signal still caught), reading only the dump that
// signal made, and how each rank's stacks were taken. A fake /proc: each
// registered process's fd links to a real file named as the memfd is, so
// the agent reads it as it reads /proc/PID/fd/N; the fake send appends a
// recorded faulthandler dump (tests/unit/data/stacks/) as the handler would.
// The hook itself runs in real Python in tests/cli/test_python_stacks_hook.sh.
#include <filesystem>
#include <fmt/format.h>
#include <fstream>

#include "catch.hpp"
#include "agent/culprit.hpp"
#include "agent/stack_parse.hpp"
#include "agent/stacks_file.hpp"
#include "fake_runner.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "agent/stacks_hook.hpp"

using namespace ddpctl;

namespace {

// /proc/PID/status of a python3 with the hook registered for signal 42 (SigCgt bit 41), recorded.
const std::string kStatusCaught =
    "Name:\tpython3\nState:\tS (sleeping)\nSigQ:\t21/96364\nSigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\n"
    "SigBlk:\t0000000000000000\nSigIgn:\t0000000001001006\nSigCgt:\t0000020100000000\n";
const std::string kStatusDefault =
    "Name:\tpython3\nSigBlk:\t0000000000000000\nSigIgn:\t0000000001001006\nSigCgt:\t0000000100000000\n";

std::string fixture(const std::string& name) {
  return read_file(test::source_dir() + "/tests/unit/data/stacks/" + name);
}

struct FakeProc {
  test::TempDir dir;
  // A process; with `signal`, its hook's memfd holding `before`.
  std::string add(int pid, const std::string& status, std::optional<int> signal = std::nullopt,
                  const std::string& before = "") {
    std::string p = dir.path + "/" + std::to_string(pid);
    std::filesystem::create_directories(p + "/fd");
    std::ofstream(p + "/status") << status;
    std::filesystem::create_symlink("/dev/null", p + "/fd/0");
    if (!signal) return "";
    std::string file = fmt::format("{}/memfd:ddpctl-stacks-sig{} (deleted)", p, *signal);
    std::ofstream(file) << before;
    std::filesystem::create_symlink(file, p + "/fd/3");
    return file;
  }
};

}  // namespace

TEST_CASE("the hook's memfd names its signal", "[stacks_hook]") {
  CHECK(hook_signal_of_link("/memfd:ddpctl-stacks-sig42 (deleted)") == 42);
  CHECK(hook_signal_of_link("/memfd:ddpctl-stacks-sig7 (deleted)") == 7);
  CHECK_FALSE(hook_signal_of_link("/memfd:other (deleted)"));
  CHECK_FALSE(hook_signal_of_link("/dev/null"));
  CHECK_FALSE(hook_signal_of_link("/memfd:ddpctl-stacks-sig (deleted)"));
  CHECK_FALSE(hook_signal_of_link("/memfd:ddpctl-stacks-sig99 (deleted)"));     // no such signal
  CHECK_FALSE(hook_signal_of_link("/memfd:ddpctl-stacks-sig42x (deleted)"));    // another name
  CHECK_FALSE(hook_signal_of_link("/home/u/xmemfd:ddpctl-stacks-sig42 (deleted)"));
}

TEST_CASE("a signal is sent only where /proc says it is caught", "[stacks_hook]") {
  CHECK(signal_caught(kStatusCaught, 42));
  CHECK_FALSE(signal_caught(kStatusCaught, 43));
  CHECK_FALSE(signal_caught(kStatusDefault, 42));  // at its default: it would end the process
  CHECK(signal_caught(kStatusCaught, 33));         // bit 32
  std::string ignored = kStatusCaught + "";
  ignored.replace(ignored.find("SigIgn:\t0000000001001006"), 24, "SigIgn:\t0000020001001006");
  CHECK_FALSE(signal_caught(ignored, 42));
  std::string blocked = kStatusCaught;
  blocked.replace(blocked.find("SigBlk:\t0000000000000000"), 24, "SigBlk:\t0000020000000000");
  CHECK_FALSE(signal_caught(blocked, 42));
  CHECK_FALSE(signal_caught("Name:\tx\n", 42));
}

TEST_CASE("the hook's text carries the signal the agent sends", "[stacks_hook]") {
  int sig = stacks_signal();
  CHECK(sig >= 34);  // a real-time signal: none of the requeue signals
  std::string text = python_hook_text(sig);
  CHECK(text.find("_ddpctl_stacks_hook(" + std::to_string(sig) + ")") != std::string::npos);
  CHECK(text.find("@SIGNAL@") == std::string::npos);
  CHECK(text.find("faulthandler.register(sig, file=fd, all_threads=True, chain=False)") != std::string::npos);
  CHECK(text.find("signal.getsignal(sig) != signal.SIG_DFL") != std::string::npos);
  test::TempDir dir;
  std::string folder = write_python_hook(dir.path + "/job_42");
  CHECK(folder == dir.path + "/job_42.python");
  CHECK(read_file(folder + "/sitecustomize.py") == text);
}

TEST_CASE("ask_python_stacks signals the registered processes and reads what they dumped", "[stacks_hook]") {
  FakeProc proc;
  test::FakeClock clock;
  std::string dump1 = fixture("gloo-faulthandler-rank1-sleep.txt");
  std::string f300 = proc.add(300, kStatusCaught, 42, "an earlier dump\n");
  proc.add(301, kStatusCaught);                  // not registered (not Python, or a forked child)
  proc.add(302, kStatusDefault, 42);             // registered, but the program took the signal back
  std::string f303 = proc.add(303, kStatusCaught, 42);  // registered, never answers
  std::vector<std::pair<int, int>> sent;
  auto send = [&](int pid, int sig) {
    sent.emplace_back(pid, sig);
    if (pid == 300) std::ofstream(f300, std::ios::app) << dump1;
    return true;
  };
  auto out = ask_python_stacks(proc.dir.path, {300, 301, 302, 303, 304}, clock, 3, send);
  REQUIRE(out.size() == 5);
  CHECK(sent == std::vector<std::pair<int, int>>{{300, 42}, {303, 42}});
  CHECK(out[0].outcome == HookOutcome::Dumped);
  CHECK(out[0].text == dump1);  // not the earlier dump
  CHECK(describe_hook_dump(out[0]) == "faulthandler (signal 42)");
  CHECK(out[1].outcome == HookOutcome::NotRegistered);
  CHECK(out[2].outcome == HookOutcome::NotCaught);
  CHECK(out[3].outcome == HookOutcome::NoAnswer);
  CHECK(describe_hook_dump(out[3]) == "no faulthandler dump after signal 42");
  CHECK(out[4].outcome == HookOutcome::NotRegistered);  // gone
  CHECK(clock.mono >= 1003);  // it waited its whole time for 303, and no longer
  CHECK(clock.mono < 1003.2);
  // The parsed dump is the sleeping rank's.
  auto threads = parse_stacks(out[0].text);
  REQUIRE_FALSE(threads.empty());
  CHECK(threads[0].format == StackFormat::Faulthandler);
}

TEST_CASE("ask_python_stacks waits for a dump still being written", "[stacks_hook]") {
  FakeProc proc;
  test::FakeClock clock;
  std::string f = proc.add(300, kStatusCaught, 42);
  int polls = 0;
  clock.on_sleep = [&] {  // the dump arrives in two writes, a poll apart
    if (++polls == 2) std::ofstream(f, std::ios::app) << "Current thread 0x1 (most recent call first):\n";
    if (polls == 3) std::ofstream(f, std::ios::app) << "  File \"x.py\", line 3 in f\n";
  };
  auto out = ask_python_stacks(proc.dir.path, {300}, clock, 3, [](int, int) { return true; });
  REQUIRE(out[0].outcome == HookOutcome::Dumped);
  CHECK(out[0].text == "Current thread 0x1 (most recent call first):\n  File \"x.py\", line 3 in f\n");
  CHECK(clock.mono < 1001);  // done once it settled, not at the deadline
}

TEST_CASE("a send that fails says so, nothing is awaited", "[stacks_hook]") {
  FakeProc proc;
  test::FakeClock clock;
  proc.add(300, kStatusCaught, 42);
  auto out = ask_python_stacks(proc.dir.path, {300}, clock, 3, [](int, int) { return false; });
  CHECK(out[0].outcome == HookOutcome::NotSent);
  CHECK(clock.mono == 1000);
}

TEST_CASE("the stacks file says how each rank's stacks were taken", "[stacks_hook]") {
  std::string file = "# stacks of job 42's training processes on g1\n"
                     "\n## pid 10 (rank 0), state S: faulthandler (signal 42)\n" +
                     fixture("gloo-faulthandler-rank0-all_reduce.txt") +
                     "\n## pid 11 (rank 1), state S: gdb -p 11 -batch -nx -ex 'thread apply all bt'\n" +
                     fixture("gloo-gdb-rank1-sleep.txt") +
                     "pid 12 (rank 2), state S: no py-spy or gdb on g1, and it did not register for faulthandler\n";
  auto ranks = read_stacks_file(file, "g1");
  REQUIRE(ranks.size() == 3);
  CHECK(ranks[0].taken_by == std::vector<StackFormat>{StackFormat::Faulthandler});
  CHECK(ranks[1].taken_by == std::vector<StackFormat>{StackFormat::Gdb});
  CHECK(ranks[2].taken_by.empty());
  CHECK(describe_stack_sources(ranks) == "faulthandler: rank 0 (g1); gdb: rank 1 (g1); none: rank 2 (g1)");
  ranks[1].taken_by = {StackFormat::Faulthandler};
  CHECK(describe_stack_sources(ranks) == "faulthandler: ranks 0, 1 (g1); none: rank 2 (g1)");
}
