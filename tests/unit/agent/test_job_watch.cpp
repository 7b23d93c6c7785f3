// The watchdog's use of files and commands (job_watch.cpp; its decisions
// are watchdog.cpp's, test_watchdog.cpp): the step observed from files in a
// temporary folder, the Watcher acting through a scripted runner, the watch
// loop on a fake clock.
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
#include "runs/usage.hpp"

using namespace ddpctl;
using test::exits;
using test::FakeClock;
using test::FakeEnvironment;
using test::FakeRunner;

namespace {

using Reading = std::pair<double, long long>;

constexpr double T0 = 1795300000;

// Sets a file's modification time, so that the observer sees the times a test chose.
void set_mtime(const std::string& path, double t) {
  timespec ts[2];
  ts[0].tv_sec = ts[1].tv_sec = static_cast<time_t>(t);
  ts[0].tv_nsec = ts[1].tv_nsec = 0;
  REQUIRE(::utimensat(AT_FDCWD, path.c_str(), ts, 0) == 0);
}

struct WatchFixture {
  test::TempDir tmp;
  FakeRunner runner;  // no rule: any command fails the test
  FakeClock clock;
  WatchOptions o;
  WatchFixture() {
    o.log_base = tmp.path + "/job_42";
    o.job_id = "42";
    o.tasks = 2;
    o.tasks_per_node = 1;
    o.per_gpu = true;
    o.nodes = {"g1", "g2"};
    o.stall_after_s = 60;
    o.interval_s = 5;
    o.stacks_wait_s = 0;
  }
  std::string log(int task) const { return fmt::format("{}.restart{}.{}.out", o.log_base, o.attempt, task); }
  // Task `task` writes `text` to its step log at `t`.
  void write_log(int task, const std::string& text, double t) {
    std::ofstream(log(task), std::ios::app) << text;
    set_mtime(log(task), t);
  }
  void both_write(double t) {
    write_log(0, "step\n", t);
    write_log(1, "step\n", t);
  }
};

// What a scope writes to std::cerr.
struct CaptureCerr {
  std::ostringstream text;
  std::streambuf* old = std::cerr.rdbuf(text.rdbuf());
  ~CaptureCerr() { std::cerr.rdbuf(old); }
};

}  // namespace

TEST_CASE("the step observer reads the tasks' logs, the progress file and recent samples", "[job_agent]") {
  WatchFixture f;
  f.write_log(0, "epoch 1 step 5\nepoch 2 step 0\n", T0 + 5);
  f.write_log(1, "epoch 1 step 5\n", T0 + 3);
  write_file_atomic(f.o.log_base + ".progress.json", "{}\n");
  set_mtime(f.o.log_base + ".progress.json", T0 + 4);
  UsageSample s;
  s.node = "g1";
  s.t = T0 + 58;
  RankUsage r0;
  r0.rank = 0;
  r0.cpu_pct = 80;
  s.ranks = {r0};
  UsageSample other_attempt = s;
  other_attempt.node = "g2";
  other_attempt.attempt = 1;
  write_file_atomic(usage_path(f.o.log_base, "g1"), usage_sample_json(s).dump() + "\n");
  write_file_atomic(usage_path(f.o.log_base, "g2"), usage_sample_json(other_attempt).dump() + "\n");
  ProgressSpec p;
  p.pattern = R"(epoch (?<epoch>\d+) step (?<step>\d+))";
  f.o.progress = p;

  StepObserver observer(f.o);
  Observation ob = observer.observe(T0 + 60);
  CHECK(ob.now == T0 + 60);
  CHECK(ob.progress_mtime == T0 + 4);
  REQUIRE(ob.tasks.size() == 2);
  CHECK(ob.tasks[0].task == 0);
  CHECK(ob.tasks[0].rank == 0);
  CHECK(ob.tasks[0].node == "g1");
  CHECK(ob.tasks[0].out_mtime == T0 + 5);
  CHECK(ob.tasks[0].out_bytes == 30);
  CHECK(ob.tasks[0].progress == Reading{2, 0});
  CHECK(ob.tasks[0].cpu_pct == 80);
  CHECK(ob.tasks[1].node == "g2");
  CHECK(ob.tasks[1].progress == Reading{1, 5});
  CHECK_FALSE(ob.tasks[1].cpu_pct);  // g2's sample is of another attempt

  SECTION("a sample older than three intervals is not now") {
    CHECK_FALSE(observer.observe(T0 + 74).tasks[0].cpu_pct);
  }
  SECTION("a task that has written nothing yet") {
    std::filesystem::remove(f.log(1));
    std::ofstream(f.log(1)).close();
    Observation empty = observer.observe(T0 + 60);
    CHECK(empty.tasks[1].out_mtime == 0);
    CHECK(empty.tasks[1].out_bytes == 0);
  }
}

TEST_CASE("an in-job restart's watch reads only what its step appended, and notes where it resumed", "[job_agent]") {
  WatchFixture f;
  ProgressSpec p;
  p.pattern = R"(epoch (?<epoch>\d+) step (?<step>\d+))";
  f.o.progress = p;
  // Step 0 reached epoch 1 step 99 before it failed (past its last
  // checkpoint); its logs are appended to.
  f.write_log(0, "epoch 1 step 99\n", T0);
  f.write_log(1, "epoch 1 step 99\n", T0);
  f.o.step = 1;
  f.o.in_job = true;
  Watcher w(f.o, f.runner, f.clock, T0 + 1);
  std::string resumed = in_job_resumed_path(f.o.log_base, 0, 1);
  std::string progress = in_job_progress_path(f.o.log_base, 0, 1);
  CHECK(w.tick(T0 + 2));
  CHECK_FALSE(std::filesystem::exists(resumed));  // nothing of step 1's yet: step 0's line is not its
  CHECK_FALSE(std::filesystem::exists(progress));
  // Resumed from the checkpoint at step 6: lower than step 0's last, and still progress.
  f.write_log(0, "ddp-train: resumed from /ck/last.pt at epoch 1, sample 96 of 1600 (written by 2 ranks, now 2); global batch 32 -> 32\n", T0 + 3);
  f.write_log(0, "epoch 1 step 6\n", T0 + 3);
  f.write_log(1, "epoch 1 step 6\n", T0 + 3);
  CHECK(w.tick(T0 + 4));
  auto j = nlohmann::json::parse(read_file(resumed));
  CHECK(j["epoch"] == 1);
  CHECK(j["step"] == 6);
  CHECK(j["from"] == "/ck/last.pt at epoch 1, sample 96 of 1600 (written by 2 ranks, now 2)");
  for (int t = 5; t <= 100; t += 5) {
    f.write_log(0, fmt::format("epoch 1 step {}\n", 6 + t / 5), T0 + t);
    f.write_log(1, fmt::format("epoch 1 step {}\n", 6 + t / 5), T0 + t);
    CHECK(w.tick(T0 + t));
  }
  // Steps 7 to 26 over 100 s (stall_after 60 s) are progress, though below step 0's 99.
  CHECK_FALSE(read_stall_record(f.o.log_base));
  // The step's latest progress, for report's time lost if it fails: the
  // pattern's last advance (its log's time), not the latest look.
  CHECK(read_in_job_progress(f.o.log_base, 0, 1) == T0 + 100);
  CHECK(w.tick(T0 + 130));
  CHECK(read_in_job_progress(f.o.log_base, 0, 1) == T0 + 100);
}

TEST_CASE("an in-job step's progress is noted only from the progress file or pattern, and only with restart:", "[job_agent]") {
  WatchFixture f;
  f.o.in_job = true;
  {
    Watcher w(f.o, f.runner, f.clock, T0);
    f.both_write(T0 + 5);  // output alone: ranks spinning in a collective write and burn CPU too
    CHECK(w.tick(T0 + 5));
    CHECK_FALSE(read_in_job_progress(f.o.log_base, 0, 0));
    write_file_atomic(f.o.log_base + ".progress.json", "{}\n");
    set_mtime(f.o.log_base + ".progress.json", T0 + 9);
    CHECK(w.tick(T0 + 10));
    CHECK(read_in_job_progress(f.o.log_base, 0, 0) == T0 + 9);
  }
  std::filesystem::remove(in_job_progress_path(f.o.log_base, 0, 0));
  f.o.in_job = false;
  Watcher w(f.o, f.runner, f.clock, T0);
  set_mtime(f.o.log_base + ".progress.json", T0 + 14);
  CHECK(w.tick(T0 + 15));
  CHECK_FALSE(std::filesystem::exists(in_job_progress_path(f.o.log_base, 0, 0)));
}

TEST_CASE("tail_lines can start at an offset", "[job_agent]") {
  test::TempDir dir;
  std::string path = dir.path + "/log";
  write_file_atomic(path, "old 1\nold 2\nnew 1\nnew 2\n");
  CHECK(tail_lines(path, 1 << 20, 12) == std::vector<std::string>{"new 1", "new 2"});
  CHECK(tail_lines(path, 6, 0) == std::vector<std::string>{"new 2"});
  CHECK(tail_lines(path, 1 << 20, 1000).empty());
}

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
  // The issue's hang: rank 1 sleeps in a callback after printing; rank 0
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

TEST_CASE("an in-job restart's step trains again once the progress file says it trains, not in its rendezvous", "[job_agent]") {
  WatchFixture f;
  f.o.step = 1;
  f.o.in_job = true;
  Watcher w(f.o, f.runner, f.clock, T0);
  std::string progress = f.o.log_base + ".progress.json";
  std::string resumed = in_job_resumed_path(f.o.log_base, 0, 1);
  // ddp-train rewrites its progress file in the rendezvous, epoch 0 step 0.
  write_file_atomic(progress, R"({"phase": "rendezvous", "epoch": 0, "epochs": 4, "step": 0, "steps": 0})");
  set_mtime(progress, T0 + 1);
  CHECK(w.tick(T0 + 1));
  CHECK_FALSE(std::filesystem::exists(resumed));
  write_file_atomic(progress, R"({"phase": "training", "epoch": 2, "epochs": 4, "step": 3, "steps": 100})");
  set_mtime(progress, T0 + 2);
  CHECK(w.tick(T0 + 2));
  auto j = nlohmann::json::parse(read_file(resumed));
  CHECK(j["epoch"] == 2);
  CHECK(j["step"] == 3);
}
