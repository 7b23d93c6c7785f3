// The watchdog's use of files and commands (job_watch.cpp; its decisions
// are watchdog.cpp's, test_watchdog.cpp): the Watcher acting through a
// scripted runner on a step in a temporary folder (watch_fixture.hpp), the
// watch loop on a fake clock. What it observes: test_job_watch_observe.cpp.
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
#include "agent/in_job_restart.hpp"
#include "agent/job_stacks.hpp"
#include "agent/job_watch.hpp"
#include "agent/watchdog.hpp"
#include "base/files.hpp"
#include "base/text.hpp"
#include "fake_runner.hpp"
#include "helpers.hpp"
#include "watch_fixture.hpp"
#include "runs/usage.hpp"

using namespace ddpctl;
using test::exits;
using test::FakeClock;
using test::FakeEnvironment;
using test::FakeRunner;
using test::set_mtime;
using test::T0;
using test::WatchFixture;

namespace {

// What a scope writes to std::cerr.
struct CaptureCerr {
  std::ostringstream text;
  std::streambuf* old = std::cerr.rdbuf(text.rdbuf());
  ~CaptureCerr() { std::cerr.rdbuf(old); }
};

}  // namespace

TEST_CASE("the watcher with action warn records the stall and runs on", "[job_agent]") {
  WatchFixture f;
  f.both_write(T0);
  Watcher w(f.o, f.runner, f.clock, T0);
  CHECK(w.tick(T0 + 30));
  CHECK_FALSE(read_stall_record(f.o.log_base));

  CHECK(w.tick(T0 + 60));
  auto r = read_stall_record(f.o.log_base);
  REQUIRE(r);
  CHECK(r->stalled);
  CHECK(r->action == "warn");
  CHECK(r->taken == WatchdogOutcome::Warned);
  CHECK(r->attempt == 0);
  CHECK(r->since == T0);
  CHECK(r->detected_at == T0 + 60);
  CHECK(r->for_s == 60);
  CHECK(r->stall_after_s == 60);
  CHECK(r->why == "no progress (output or CPU time) for 1m00s: no rank stands out");
  CHECK(r->basis == "output or CPU time");
  CHECK(r->detail == "no rank stands out");
  CHECK(r->stacks.empty());

  CHECK(w.tick(T0 + 90));
  CHECK(read_stall_record(f.o.log_base)->for_s == 90);

  f.write_log(1, "step\n", T0 + 95);
  CHECK(w.tick(T0 + 100));
  r = read_stall_record(f.o.log_base);
  REQUIRE(r);
  CHECK_FALSE(r->stalled);
  CHECK(r->resumed_at == T0 + 100);
  CHECK(r->taken == WatchdogOutcome::Warned);
  CHECK(f.runner.calls.empty());
  CHECK_FALSE(std::filesystem::exists(stacks_request_path(f.o.log_base, 0)));
}

TEST_CASE("the watcher with action cancel asks for stacks, records, then scancels", "[job_agent]") {
  WatchFixture f;
  f.o.action = StallAction::Cancel;
  f.runner.on("scancel", {}, exits(0));
  f.both_write(T0);
  // g1's sampler answered the request; g2's did not.
  write_file_atomic(stacks_path(f.o.log_base, 0, "g1"), "# stacks of job 42's training processes on g1\n");
  Watcher w(f.o, f.runner, f.clock, T0);
  CHECK(w.tick(T0 + 59));
  CHECK_FALSE(w.tick(T0 + 60));
  CHECK(f.runner.calls == std::vector<std::vector<std::string>>{{"scancel", "42"}});
  CHECK(std::filesystem::exists(stacks_request_path(f.o.log_base, 0)));
  auto r = read_stall_record(f.o.log_base);
  REQUIRE(r);
  CHECK(r->action == "cancel");
  CHECK(r->taken == WatchdogOutcome::Cancelled);
  CHECK(r->stacks == std::vector<std::string>{f.o.log_base + ".restart0.stacks.g1.txt"});
  CHECK(w.record().taken == WatchdogOutcome::Cancelled);
}

TEST_CASE("the watcher names the culprit from the stacks, not from who printed last", "[job_agent]") {
  // The hang: rank 1 sleeps in a callback after printing; rank 0
  // printed earlier and waits in all_reduce. Output timing names rank 0.
  WatchFixture f;
  f.o.action = StallAction::Cancel;
  f.runner.on("scancel", {}, exits(0));
  f.write_log(0, "step\n", T0 - 10);
  f.write_log(1, "step\n", T0);
  auto section = [](int pid, int rank, const std::string& fixture) {
    return fmt::format("\n## pid {} (rank {}), state S: gdb -p {} -batch -nx -ex 'thread apply all bt'\n", pid, rank,
                       pid) +
           read_file(test::source_dir() + "/tests/unit/data/stacks/" + fixture);
  };
  write_file_atomic(stacks_path(f.o.log_base, 0, "g1"), "# stacks of job 42's training processes on g1\n" +
                                                             section(17721, 0, "gloo-gdb-rank0-all_reduce.txt"));
  std::string g2 = "# stacks of job 42's training processes on g2\n" + section(17723, 1, "gloo-gdb-rank1-sleep.txt");
  SECTION("both nodes' stacks: rank 1 is named with its frame") {
    write_file_atomic(stacks_path(f.o.log_base, 0, "g2"), g2);
    Watcher w(f.o, f.runner, f.clock, T0);
    CHECK_FALSE(w.tick(T0 + 60));
    auto r = read_stall_record(f.o.log_base);
    REQUIRE(r);
    CHECK(r->detail == "rank 0 (g1) wrote its last output 10s before the others");  // the timing guess, kept apart
    CHECK(r->culprit_named);
    CHECK(r->culprit == "rank 1 (g2) is not in a collective — at clock_nanosleep; rank 0 (g1) waits in a collective "
                        "(c10d::Work::wait)");
    REQUIRE(r->stopped.size() == 1);
    CHECK(r->stopped[0].rank == 1);
    CHECK(r->stopped[0].node == "g2");
    std::string said = describe_stall(*r);
    CHECK(said.rfind("stalled 1m00s: rank 1 (g2) is not in a collective — at clock_nanosleep; rank 0 (g1) waits", 0) == 0);
    CHECK(said.find("last output") == std::string::npos);
  }
  SECTION("g2 answered nothing: the stacks say why no culprit, beside the timing") {
    Watcher w(f.o, f.runner, f.clock, T0);
    CHECK_FALSE(w.tick(T0 + 60));
    auto r = read_stall_record(f.o.log_base);
    REQUIRE(r);
    CHECK_FALSE(r->culprit_named);
    CHECK(r->culprit == "only rank 0 (g1)'s stacks were read, nothing to compare them with (waiting in a collective "
                        "(c10d::Work::wait))");
    CHECK(describe_stall(*r).find(".stacks.g1.txt: only rank 0 (g1)'s stacks were read") != std::string::npos);
  }
}

TEST_CASE("the watcher names ddp-train's hung rank from the trainer's collective counters", "[job_agent]") {
  // The nodes' stacks files of a real ddp-train hang without gdb or py-spy
  // (tests/unit/data/stacks/README.md): no stacks, only the workers' answers.
  WatchFixture f;
  f.o.action = StallAction::Cancel;
  f.runner.on("scancel", {}, exits(0));
  f.both_write(T0);
  for (const char* node : {"g1", "g2"})
    write_file_atomic(stacks_path(f.o.log_base, 0, node),
                      read_file(fmt::format("{}/tests/unit/data/stacks/ddp-train-hang-rank1-{}.txt", test::source_dir(), node)));
  Watcher w(f.o, f.runner, f.clock, T0);
  CHECK_FALSE(w.tick(T0 + 60));
  auto r = read_stall_record(f.o.log_base);
  REQUIRE(r);
  CHECK(r->culprit_named);
  REQUIRE(r->stopped.size() == 1);
  CHECK(r->stopped[0].rank == 1);
  CHECK(r->stopped[0].node == "g1");
  CHECK(describe_stall(*r).rfind("stalled 1m00s: rank 1 (g1) never entered collective #11 backward with the Reducer's "
                                 "gradient all_reduce — it left #10, at \"epoch 1, step 3 of 1562: loading a batch\" "
                                 "for 20 s; ranks 0, 2, 3 (g1, g2) wait in #11; stacks in ",
                                 0) == 0);
}

TEST_CASE("the watcher with action requeue requeues while requeues are left, else cancels", "[job_agent]") {
  WatchFixture f;
  f.o.action = StallAction::Requeue;
  f.o.max_requeues = 2;
  f.runner.on("scontrol", {"requeue"}, exits(0));
  f.runner.on("scancel", {}, exits(0));

  SECTION("requeues left") {
    f.o.attempt = 1;
    f.both_write(T0);
    Watcher w(f.o, f.runner, f.clock, T0);
    CHECK_FALSE(w.tick(T0 + 60));
    CHECK(f.runner.calls == std::vector<std::vector<std::string>>{{"scontrol", "requeue", "42"}});
    auto r = read_stall_record(f.o.log_base);
    REQUIRE(r);
    CHECK(r->attempt == 1);
    CHECK(r->action == "requeue");
    CHECK(r->taken == WatchdogOutcome::Requeued);
  }
  SECTION("the last requeue used") {
    f.o.attempt = 2;
    f.both_write(T0);
    Watcher w(f.o, f.runner, f.clock, T0);
    CHECK_FALSE(w.tick(T0 + 60));
    CHECK(f.runner.calls == std::vector<std::vector<std::string>>{{"scancel", "42"}});
    CHECK(read_stall_record(f.o.log_base)->taken == WatchdogOutcome::Cancelled);
  }
}

TEST_CASE("a raced winner's watchdog races the group again before it requeues, once, and requeues if that fails", "[job_agent]") {
  WatchFixture f;
  f.o.action = StallAction::Requeue;
  f.o.max_requeues = 2;
  f.o.attempt = 0;
  f.o.race_run = "/home/u/runs/r1";
  f.o.race_program = "/opt/ddpctl/bin/ddpctl";
  f.both_write(T0);
  std::vector<std::string> race_again = {"/opt/ddpctl/bin/ddpctl", "race-again", "/home/u/runs/r1", "--requeuing", "42",
                                         "--because"};

  SECTION("it races again, then requeues") {
    f.runner.on("/opt/ddpctl/bin/ddpctl", {"race-again"}, exits(0, "run r1: generation 2 races 2x1\n"));
    f.runner.on("scontrol", {"requeue"}, exits(0));
    Watcher w(f.o, f.runner, f.clock, T0);
    CHECK_FALSE(w.tick(T0 + 60));
    REQUIRE(f.runner.calls.size() == 2);
    CHECK(std::vector<std::string>(f.runner.calls[0].begin(), f.runner.calls[0].begin() + 6) == race_again);
    CHECK_THAT(f.runner.calls[0][6], Catch::StartsWith("by the watchdog: stalled "));
    CHECK(f.runner.calls[0].size() == 7);  // no node left out
    CHECK(f.runner.calls[1] == std::vector<std::string>{"scontrol", "requeue", "42"});
    CHECK(read_stall_record(f.o.log_base)->taken == WatchdogOutcome::Requeued);
  }
  SECTION("a failed re-race is said, and the job is requeued all the same; a retried requeue does not race again") {
    f.runner.on("/opt/ddpctl/bin/ddpctl", {"race-again"}, exits(1, "", "ddpctl: error: no run r1\n"));
    int requeues = 0;
    f.runner.on("scontrol", {"requeue"}, [&](const std::vector<std::string>&) {
      return requeues++ == 0 ? exits(1, "", "scontrol: error: Socket timed out\n") : exits(0);
    });
    CaptureCerr err;
    Watcher w(f.o, f.runner, f.clock, T0);
    CHECK(w.tick(T0 + 60));  // the requeue failed: tried again in an interval
    CHECK_FALSE(w.tick(T0 + 65));
    CHECK(f.runner.count("/opt/ddpctl/bin/ddpctl") == 1);
    CHECK(f.runner.count("scontrol") == 2);
    CHECK_THAT(err.text.str(), Catch::Contains("ddpctl: race: warning: the re-race failed here (") &&
                                   Catch::Contains("'ddpctl race-again /home/u/runs/r1' on the login node does it"));
    CHECK(read_stall_record(f.o.log_base)->taken == WatchdogOutcome::Requeued);
  }
  SECTION("the last restart used: it cancels, and does not race again") {
    f.o.attempt = 2;
    f.runner.on("scancel", {}, exits(0));
    Watcher w(f.o, f.runner, f.clock, T0);
    CHECK_FALSE(w.tick(T0 + 60));
    CHECK(f.runner.calls == std::vector<std::vector<std::string>>{{"scancel", "42"}});
  }
}

TEST_CASE("the watcher acts first, then records what the act returned, a failed act is tried again", "[job_agent]") {
  WatchFixture f;
  f.o.action = StallAction::Cancel;
  f.both_write(T0);
  std::vector<std::string> taken_at_scancel;  // the record as each scancel runs
  int failures = 1;
  f.runner.on("scancel", {}, [&](const std::vector<std::string>&) {
    auto r = read_stall_record(f.o.log_base);
    taken_at_scancel.push_back(r ? watchdog_outcome_text(r->taken) : "(no record)");
    return failures-- > 0 ? exits(1, "", "scancel: error: Kill job error on job id 42: Access/permission denied\n")
                          : exits(0);
  });
  Watcher w(f.o, f.runner, f.clock, T0);
  CHECK(w.tick(T0 + 60));  // the scancel failed: the watch goes on, to try again
  auto r = read_stall_record(f.o.log_base);
  REQUIRE(r);
  CHECK(r->taken == WatchdogOutcome::CancelFailed);
  CHECK_THAT(r->result, Catch::StartsWith("scancel failed: scancel exited with status 1: "));
  CHECK_THAT(r->result, Catch::Contains("Access/permission denied"));
  CHECK_FALSE(w.tick(T0 + 65));
  r = read_stall_record(f.o.log_base);
  REQUIRE(r);
  CHECK(r->taken == WatchdogOutcome::Cancelled);
  CHECK(r->result == "scancel 42: done");
  // Never "cancelled" before scancel has run.
  CHECK(taken_at_scancel == std::vector<std::string>{"cancelling", "cancel-failed"});

  SECTION("given up after three failures") {
    WatchFixture g;
    g.o.action = StallAction::Cancel;
    g.both_write(T0);
    g.runner.on("scancel", {}, exits(1, "", "scancel: error: Invalid job id specified\n"));
    Watcher x(g.o, g.runner, g.clock, T0);
    CHECK(x.tick(T0 + 60));
    CHECK(x.tick(T0 + 65));
    CHECK_FALSE(x.tick(T0 + 70));
    CHECK(g.runner.count("scancel") == 3);
    CHECK(read_stall_record(g.o.log_base)->taken == WatchdogOutcome::CancelFailed);
  }
}

TEST_CASE("a record the log folder cannot take does not stop the cancel", "[job_agent]") {
  WatchFixture f;
  f.o.action = StallAction::Cancel;
  f.runner.on("scancel", {}, exits(0));
  f.both_write(T0);
  // A folder where the stall record and the stacks request go: every write of
  // them fails, as in a full or read-only folder (which would not stop root).
  std::filesystem::create_directory(stall_record_path(f.o.log_base));
  std::filesystem::create_directory(stacks_request_path(f.o.log_base, 0));
  Watcher w(f.o, f.runner, f.clock, T0);
  bool goes_on = true;
  std::string err;
  {
    CaptureCerr cerr;
    REQUIRE_NOTHROW(goes_on = w.tick(T0 + 60));
    err = cerr.text.str();
  }
  CHECK_FALSE(goes_on);
  CHECK(f.runner.calls == std::vector<std::vector<std::string>>{{"scancel", "42"}});
  CHECK(w.record().taken == WatchdogOutcome::Cancelled);
  CHECK_THAT(err, Catch::Contains("ddpctl: watchdog: error: the stall record could not be written"));
  CHECK_THAT(err, Catch::Contains("ddpctl: watchdog: error: cannot ask for the stacks"));
  CHECK_THAT(err, Catch::Contains("ddpctl: watchdog: cancelling job 42: stalled 1m00s"));
}

TEST_CASE("the watch loop on a clock: a look every interval, the cancel after stall_after, then done", "[job_agent]") {
  WatchFixture f;
  f.o.action = StallAction::Cancel;
  f.runner.on("scancel", {}, exits(0));
  FakeEnvironment env;
  env.vars = {{"SLURM_JOB_ID", "42"}, {"SLURM_RESTART_COUNT", "0"}};
  SlurmClient slurm(f.runner);
  Context ctx{f.runner, slurm, f.clock, env};
  double start = f.clock.wall();

  SECTION("a step that shows nothing stalls after stall_after") {
    run_watch(f.o, ctx);
    CHECK(f.runner.calls == std::vector<std::vector<std::string>>{{"scancel", "42"}});
    CHECK(f.clock.sleeps == 12);  // 60 s in looks 5 s apart
    auto r = read_stall_record(f.o.log_base);
    REQUIRE(r);
    CHECK(r->detected_at == start + 60);
    CHECK(r->since == start);
  }
  SECTION("the step has ended: the watch ends with it, without a look") {
    f.o.step_pid = 4194305;  // above any pid_max: no such process
    run_watch(f.o, ctx);
    CHECK(f.clock.sleeps == 1);
    CHECK(f.runner.calls.empty());
    CHECK_FALSE(read_stall_record(f.o.log_base));
  }
  SECTION("an array task is cancelled as <array>_<task>: its own id may be the array's, which names every task") {
    env.vars["SLURM_ARRAY_JOB_ID"] = "42";
    env.vars["SLURM_ARRAY_TASK_ID"] = "3";
    run_watch(f.o, ctx);
    CHECK(f.runner.calls == std::vector<std::vector<std::string>>{{"scancel", "42_3"}});
    auto r = read_stall_record(f.o.log_base);
    REQUIRE(r);
    CHECK(r->result == "scancel 42_3: done");
  }
  SECTION("outside a job it says so") {
    env.vars.erase("SLURM_JOB_ID");
    CHECK_THAT(test::user_error_of([&] { run_watch(f.o, ctx); }), Catch::Contains("SLURM_JOB_ID is not set"));
  }
}
