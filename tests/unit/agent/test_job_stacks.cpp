// The ranks' stacks (job_stacks.cpp): the budget, and dump_stacks over a
// fake /proc and a scripted runner (py-spy, gdb).
#include <algorithm>
#include "catch.hpp"
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/culprit.hpp"
#include "agent/stack_parse.hpp"
#include "agent/stacks_file.hpp"
#include "agent/job_stacks.hpp"
#include "fake_runner.hpp"
#include "helpers.hpp"

using namespace ddpctl;
using test::exits;
using test::FakeClock;
using test::FakeEnvironment;
using test::FakeRunner;

TEST_CASE("the stacks' budget: 20 s, or the job's DDPCTL_STACKS_BUDGET where it is a duration", "[job_agent]") {
  FakeEnvironment env;
  CHECK(stacks_budget(env) == 20);
  env.vars["DDPCTL_STACKS_BUDGET"] = "90";
  CHECK(stacks_budget(env) == 90);
  env.vars["DDPCTL_STACKS_BUDGET"] = "2m";
  CHECK(stacks_budget(env) == 120);
  for (const char* bad : {"soon", "0", "-5"}) {
    env.vars["DDPCTL_STACKS_BUDGET"] = bad;
    CHECK(stacks_budget(env) == 20);
  }
}

namespace {

// A /proc of job 42's processes on g1, and the commands the dump runs.
struct StacksFixture {
  test::TempDir proc;
  FakeRunner runner;
  FakeClock clock;
  const std::string head = "# stacks of job 42's training processes on g1\n";
  void process(int pid, const std::vector<std::string>& env, int ppid = 1) {
    std::string dir = proc.path + "/" + std::to_string(pid);
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/stat") << pid << " (python) S " << ppid
                                 << " 1 1 0 -1 0 0 0 0 0 100 20 0 0 20 0 1 0 5000 1000000 2000 0 0 0\n";
    std::string text;
    for (const auto& v : env) text += v + '\0';
    std::ofstream(dir + "/environ", std::ios::binary) << text;
  }
  // Rank 0 (pid 200) and the sampler's shell (201), not a training process.
  void rank0() {
    process(200, {"SLURM_JOB_ID=42", "SLURMD_NODENAME=g1", "SLURM_PROCID=0", "RANK=0", "DDPCTL_TRAINING=1"});
    process(201, {"SLURM_JOB_ID=42", "SLURMD_NODENAME=g1", "SLURM_PROCID=0"});
  }
};

}  // namespace

TEST_CASE_METHOD(StacksFixture, "dump_stacks dumps the training processes with py-spy, else gdb, else says so",
                 "[job_agent]") {

  SECTION("no training process") {
    CHECK(dump_stacks(runner, clock, proc.path, {"42", "g1", "", ""}, 5) == head + "(no training process found)\n");
  }
  rank0();
  SECTION("neither tool") {
    runner.on("py-spy", {}, test::not_found()).on("gdb", {}, test::not_found());
    CHECK(dump_stacks(runner, clock, proc.path, {"42", "g1", "", ""}, 5) == head + "pid 200 (rank 0), state S: no py-spy or gdb on g1, and it did not register for faulthandler (not "
                 "Python, or started without ddpctl's sitecustomize)\n");
  }
  SECTION("py-spy fails on a native program (the bundled trainer): gdb") {
    runner.on("py-spy", {"--version"}, exits(0, "py-spy 0.3.14\n"));
    runner.on("py-spy", {"dump"}, exits(1, "", "Error: Failed to find python version from target process\n"));
    runner.on("gdb", {"--version"}, exits(0, "GNU gdb 12.1\n"));
    runner.on("gdb", {"-p"}, exits(0, "Thread 1 (LWP 200):\n#0  recv ()\n"));
    CHECK(dump_stacks(runner, clock, proc.path, {"42", "g1", "", ""}, 5) ==
          head + "\n## pid 200 (rank 0), state S: gdb -p 200 -batch -nx -ex 'thread apply all bt'\nThread 1 (LWP 200):\n"
                 "#0  recv ()\n");
  }
  SECTION("a gdb that prints its version but does not exit in time is there; one that fails is said") {
    runner.on("py-spy", {}, test::not_found());
    CommandResult slow = test::times_out();
    slow.out = "GNU gdb (Debian 16.3-1) 16.3\n";
    runner.on("gdb", {"--version"}, slow);
    runner.on("gdb", {"-p"}, exits(0, "Thread 1 (LWP 200):\n#0  recv ()\n"));
    CHECK(dump_stacks(runner, clock, proc.path, {"42", "g1", "", ""}, 5) ==
          head + "\n## pid 200 (rank 0), state S: gdb -p 200 -batch -nx -ex 'thread apply all bt'\nThread 1 (LWP 200):\n"
                 "#0  recv ()\n");
  }
  SECTION("a gdb that cannot say its version is not used, and that is said") {
    runner.on("py-spy", {}, test::not_found());
    runner.on("gdb", {"--version"}, exits(127, "", "gdb: error while loading shared libraries\n"));
    CHECK_THAT(dump_stacks(runner, clock, proc.path, {"42", "g1", "", ""}, 5),
               Catch::Contains("(gdb not used on g1: gdb exited with status 127: gdb: error while loading shared libraries)"));
    CHECK(runner.count("gdb", {"-p"}) == 0);
  }
  SECTION("py-spy") {
    runner.on("gdb", {}, test::not_found());
    runner.on("py-spy", {"--version"}, exits(0, "py-spy 0.3.14\n"));
    runner.on("py-spy", {"dump"}, exits(0, "Thread 200 (idle): \"MainThread\"\n    wait (train.py:12)\n"));
    CHECK(dump_stacks(runner, clock, proc.path, {"42", "g1", "", ""}, 5) ==
          head + "\n## pid 200 (rank 0), state S: py-spy dump --pid 200\nThread 200 (idle): \"MainThread\"\n"
                 "    wait (train.py:12)\n");
  }
}

TEST_CASE_METHOD(StacksFixture, "dump_stacks: every rank at once, a launcher apart, a worker under its rank, a failed dump said",
                 "[job_agent]") {
  rank0();
  SECTION("two ranks: dumped at once, each under its own heading") {
    process(202, {"SLURM_JOB_ID=42", "SLURMD_NODENAME=g1", "SLURM_PROCID=1", "RANK=1", "DDPCTL_TRAINING=1"});
    runner.on("gdb", {}, test::not_found());
    runner.on("py-spy", {"--version"}, exits(0, "py-spy 0.3.14\n"));
    runner.on("py-spy", {"dump"}, [](const std::vector<std::string>& argv) { return exits(0, "pid " + argv[3] + "\n"); });
    CHECK(dump_stacks(runner, clock, proc.path, {"42", "g1", "", ""}, 5) ==
          head + "\n## pid 200 (rank 0), state S: py-spy dump --pid 200\npid 200\n"
                 "\n## pid 202 (rank 1), state S: py-spy dump --pid 202\npid 202\n");
    CHECK(runner.count("py-spy", {"dump"}) == 2);
  }
  SECTION("a launcher (torchrun's agent) is no rank; a rank's child process (a DataLoader worker) is its own") {
    // 190: the node's task, which started rank 0 (200), whose worker is 210; RANK is inherited by the worker.
    process(190, {"SLURM_JOB_ID=42", "SLURMD_NODENAME=g1", "SLURM_PROCID=0", "DDPCTL_TRAINING=1"});
    process(200, {"SLURM_JOB_ID=42", "SLURMD_NODENAME=g1", "SLURM_PROCID=0", "RANK=0", "DDPCTL_TRAINING=1"}, 190);
    process(210, {"SLURM_JOB_ID=42", "SLURMD_NODENAME=g1", "SLURM_PROCID=0", "RANK=0", "DDPCTL_TRAINING=1"}, 200);
    runner.on("py-spy", {}, test::not_found());
    runner.on("gdb", {"--version"}, exits(0, "GNU gdb 12.1\n"));
    runner.on("gdb", {"-p"}, [](const std::vector<std::string>& argv) { return exits(0, "Thread 1 (LWP " + argv[2] + "):\n"); });
    std::string out = dump_stacks(runner, clock, proc.path, {"42", "g1", "", ""}, 5);
    CHECK(out == head +
                     "pid 190 (task 0, launcher), state S: not asked further, a launcher is no rank: it did not register "
                     "for faulthandler (not Python, or started without ddpctl's sitecustomize)\n"
                     "\n## pid 200 (rank 0), state S: gdb -p 200 -batch -nx -ex 'thread apply all bt'\nThread 1 (LWP 200):\n"
                     "\n## pid 210 (rank 0, child of pid 200), state S: gdb -p 210 -batch -nx -ex 'thread apply all bt'\n"
                     "Thread 1 (LWP 210):\n");
    CHECK(runner.count("gdb", {"-p", "190"}) == 0);
    auto ranks = read_stacks_file(out, "g1");
    REQUIRE(ranks.size() == 1);
    CHECK(ranks[0].rank == 0);
    REQUIRE(ranks[0].children.size() == 1);
    CHECK(ranks[0].children[0].pid == 210);
  }
  SECTION("gdb, and a dump that fails says how") {
    runner.on("py-spy", {}, test::not_found());
    runner.on("gdb", {"--version"}, exits(0, "GNU gdb 12.1\n"));
    runner.on("gdb", {"-p"}, exits(1, "", "ptrace: Operation not permitted.\n"));
    std::string out = dump_stacks(runner, clock, proc.path, {"42", "g1", "", ""}, 5);
    CHECK(out == head + "\n## pid 200 (rank 0), state S: gdb -p 200 -batch -nx -ex 'thread apply all bt'\n"
                        "(gdb exited with status 1: ptrace: Operation not permitted.)\n");
  }
}

// A Gloo rank's Flight Recorder dump is made by the hook's Python thread;
// faulthandler's dump, walking every thread from a signal handler, can crash
// on a thread running Python meanwhile (job_stacks.cpp). So the pipe is
// written only once the faulthandler dumps are in.
TEST_CASE("dump_stacks asks the Flight Recorders once the faulthandler dumps are in", "[job_agent]") {
  test::TempDir proc, files;
  std::string dir = proc.path + "/200";
  std::filesystem::create_directories(dir + "/fd");
  std::ofstream(dir + "/stat") << "200 (python3) S 1 1 1 0 -1 0 0 0 0 0 100 20 0 0 20 0 1 0 5000 1000000 2000 0 0 0\n";
  using namespace std::string_literals;
  std::string env = "SLURM_JOB_ID=42\0SLURMD_NODENAME=g1\0SLURM_PROCID=0\0RANK=0\0DDPCTL_TRAINING=1\0"s;
  std::ofstream(dir + "/environ", std::ios::binary) << env;
  std::ofstream(dir + "/status") << "Name:\tpython3\nSigBlk:\t0000000000000000\nSigIgn:\t0000000001001006\n"
                                    "SigCgt:\t0000020000000000\n";  // signal 42 caught
  // The hook's memfd, as /proc shows it (a file here, whose name is the memfd's).
  std::string memfd = files.path + "/memfd:ddpctl-stacks-sig42";
  std::ofstream(memfd) << "";
  std::filesystem::create_symlink(memfd, dir + "/fd/6");
  // Rank 0's dump pipe, read (as the hook's thread holds it open).
  std::string stem = files.path + "/pipe_";
  REQUIRE(::mkfifo((stem + "0.pipe").c_str(), 0600) == 0);
  int reader = ::open((stem + "0.pipe").c_str(), O_RDWR | O_NONBLOCK);
  REQUIRE(reader >= 0);
  auto pipe_asked = [reader] {
    char c;
    return ::read(reader, &c, 1) == 1;
  };
  std::vector<std::string> signalled;
  SignalSender send = [&](int pid, int sig) {
    signalled.push_back(fmt::format("{} {} pipe {}", pid, sig, pipe_asked() ? "asked" : "not asked"));
    std::ofstream(memfd, std::ios::app) << "Current thread 0x00007f (most recent call first):\n"
                                           "  File \"train.py\", line 9 in main\n";
    return true;
  };
  FakeRunner runner;
  runner.on("py-spy", {}, test::not_found()).on("gdb", {}, test::not_found());
  FakeClock clock;
  std::string out = dump_stacks(runner, clock, proc.path, {"42", "g1", "", ""}, 5, "", stem, send);
  CHECK(signalled == std::vector<std::string>{"200 42 pipe not asked"});
  CHECK(pipe_asked());  // asked after the dump
  CHECK_THAT(out, Catch::Contains("rank 0: asked\n"));
  CHECK_THAT(out, Catch::Contains("## pid 200 (rank 0), state S: faulthandler (signal 42)\n"
                                  "Current thread 0x00007f (most recent call first):\n"));
  ::close(reader);
}

// Recorded under CI's load (trainer_slurm_watchdog_names_hung_rank): rank 3's
// answer was read when its handler had written part of the line, and the
// culprit said "rank 3 gave no counters". A whole answer ends in a newline.
TEST_CASE("the trainer's SIGQUIT answers are read once each is whole", "[job_agent]") {
  test::TempDir dir;
  std::string a = dir.path + "/a.txt", b = dir.path + "/b.txt";
  const std::string whole_a = "ddp-train: rank 0: epoch 1, step 3 of 1562: backward for 22 s; collectives: entered #11\n";
  const std::string part_b = "ddp-train: rank 3: epoch 1, step 3 of 1562: backward and the gradient allreduce for 22";
  test::write(a, whole_a);
  test::write(b, part_b);
  FakeClock clock;
  SECTION("the rest written while it waits") {
    clock.on_sleep = [&] {
      if (clock.sleeps == 3) test::write(b, part_b + " s; collectives: entered #11\n");
    };
    auto said = await_trainer_answers(clock, {a, b}, 2);
    CHECK(said == std::vector<std::string>{whole_a, part_b + " s; collectives: entered #11\n"});
    CHECK(clock.sleeps == 3);
  }
  SECTION("never finished: what there is, after the wait") {
    auto said = await_trainer_answers(clock, {a, b}, 2);
    CHECK(said == std::vector<std::string>{whole_a, part_b});
    CHECK(clock.mono >= 1002);
    CHECK(clock.mono < 1002.2);
  }
  SECTION("no answer at all") {
    auto said = await_trainer_answers(clock, {a, dir.path + "/none.txt"}, 2);
    CHECK(said[1].empty());
  }
}
