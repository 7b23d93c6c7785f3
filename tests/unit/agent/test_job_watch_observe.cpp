// What the watchdog observes of a step (job_watch.hpp's StepObserver, and
// the Watcher over an in-job restart's step): the tasks' logs, the progress
// file and recent samples, read from files in a temporary folder
// (watch_fixture.hpp). What it does with a stall: test_job_watch.cpp.
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

using Reading = std::pair<double, long long>;

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
