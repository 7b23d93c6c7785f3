// The stall watchdog (watchdog.cpp) on recorded observation sequences and
// the record it keeps; its hints over usage samples are
// test_watchdog_hints.cpp's. Its use of files and commands, the `job watch`
// loop, is test_job_watch.cpp's.
#include <algorithm>
#include "catch.hpp"
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/stat.h>
#include <map>
#include <unistd.h>

#include "agent/culprit.hpp"
#include "fake_runner.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "agent/in_job_restart.hpp"
#include "base/text.hpp"
#include "runs/usage.hpp"
#include "agent/watchdog.hpp"

using namespace ddpctl;
using test::exits;
using test::FakeClock;
using test::FakeEnvironment;
using test::FakeRunner;

namespace {

using Reading = std::pair<double, long long>;

// Rank `t` of a per_gpu step, two ranks a node: ranks 0, 1 on g1, 2, 3 on g2.
TaskObservation rank(int t, double out_mtime, std::optional<Reading> progress = {},
                     std::optional<double> cpu = {}) {
  TaskObservation o;
  o.task = t;
  o.rank = t;
  o.node = t < 2 ? "g1" : "g2";
  o.out_bytes = out_mtime > 0 ? 100 : 0;
  o.out_mtime = out_mtime;
  o.progress = progress;
  o.cpu_pct = cpu;
  return o;
}

Observation at(double now, std::vector<TaskObservation> tasks, std::optional<double> progress_mtime = {}) {
  Observation o;
  o.now = now;
  o.progress_mtime = progress_mtime;
  o.tasks = std::move(tasks);
  return o;
}

// Four ranks whose logs last changed at these times, each using `cpu`.
Observation outputs(double now, std::vector<double> mtimes, std::vector<double> cpu = {2, 2, 2, 2}) {
  std::vector<TaskObservation> tasks;
  for (int t = 0; t < static_cast<int>(mtimes.size()); t++)
    tasks.push_back(rank(t, mtimes[static_cast<size_t>(t)], {}, cpu[static_cast<size_t>(t)]));
  return at(now, tasks);
}

StoppedTask stopped(int task, std::optional<int> r, const std::string& node) { return {task, r, node}; }

}  // namespace

TEST_CASE("the progress file advancing is progress, stopping is a stall once stall_after passes", "[watchdog]") {
  StallWatch w(60, 1000);
  for (double now = 1005; now <= 1030; now += 5) {
    StallVerdict v = w.observe(at(now, {rank(0, now), rank(1, now)}, now - 1));
    CHECK_FALSE(v.stalled);
    CHECK(v.since == now - 1);
    CHECK(v.basis == "the progress file");
  }
  // The file stops at 1029. CPU time does not count beside it: rank 1 spins.
  int stalls = 0;
  double first_stall = 0;
  for (double now = 1031; now <= 1120; now += 1) {
    StallVerdict v = w.observe(at(now, {rank(0, 1030), rank(1, 1030, {}, 100.0)}, 1029));
    if (v.stalled && stalls++ == 0) {
      first_stall = now;
      CHECK(v.since == 1029);
      CHECK(v.for_s == 60);
      CHECK(v.basis == "the progress file");
      CHECK(v.stopped.empty());
      CHECK(v.why == "no progress (the progress file) for 1m00s: rank 1 (g1) still using CPU (spinning?)");
    }
  }
  CHECK(first_stall == 1089);
  CHECK(stalls == 1120 - 1089 + 1);  // stalled from then on, until progress

  StallVerdict resumed = w.observe(at(1125, {rank(0, 1030), rank(1, 1125)}, 1124));
  CHECK_FALSE(resumed.stalled);
  CHECK(resumed.since == 1124);
  CHECK(resumed.for_s == 1);

  SECTION("a progress file ahead of this node's clock counts as now") {
    StallVerdict ahead = w.observe(at(1130, {}, 1500));
    CHECK(ahead.since == 1130);
  }
  SECTION("the file's time going backwards is no progress before the last") {
    StallVerdict back = w.observe(at(1130, {}, 1100));
    CHECK(back.since == 1124);
  }
}

TEST_CASE("before any sign of progress the attempt's start counts", "[watchdog]") {
  StallWatch w(60, 1000);
  CHECK_FALSE(w.observe(outputs(1059, {0, 0, 0, 0})).stalled);
  StallVerdict v = w.observe(outputs(1060, {0, 0, 0, 0}));
  CHECK(v.stalled);
  CHECK(v.since == 1000);
  CHECK(v.basis == "output or CPU time");
  CHECK(v.detail == "no rank stands out");
  CHECK(v.why == "no progress (output or CPU time) for 1m00s: no rank stands out");

  SECTION("a progress file older than the start (a requeued job's) is no progress") {
    StallWatch again(60, 2000);
    StallVerdict old = again.observe(at(2010, {rank(0, 0)}, 1500));
    CHECK(old.since == 2000);
    CHECK(again.observe(at(2060, {rank(0, 0)}, 1500)).stalled);
  }
}

TEST_CASE("the progress pattern: the rank left behind is named", "[watchdog]") {
  StallWatch w(60, 1000);
  Reading e0{0, 0}, e1{1, 0};
  CHECK_FALSE(w.observe(at(1010, {rank(0, 1010, e0), rank(1, 1010, e0), rank(2, 1010, e0), rank(3, 1010, e0)})).stalled);
  StallVerdict v = w.observe(at(1020, {rank(0, 1020, e1), rank(1, 1010, e0), rank(2, 1020, e1), rank(3, 1020, e1)}));
  CHECK_FALSE(v.stalled);
  CHECK(v.basis == "the progress pattern");
  CHECK(v.since == 1020);

  // The others keep writing (NCCL warnings, say): output is no progress here.
  auto stuck = [&](double now) {
    return at(now, {rank(0, now, e1), rank(1, 1010, e0), rank(2, now, e1), rank(3, now, e1)});
  };
  CHECK_FALSE(w.observe(stuck(1079)).stalled);
  v = w.observe(stuck(1080));
  REQUIRE(v.stalled);
  CHECK(v.since == 1020);
  CHECK(v.for_s == 60);
  REQUIRE(v.stopped.size() == 1);
  CHECK(v.stopped[0].task == 1);
  CHECK(v.stopped[0].rank == 1);
  CHECK(v.stopped[0].node == "g1");
  CHECK(v.detail == "rank 1 (g1) stopped at epoch 0 step 0; the others reached epoch 1 step 0");
  CHECK(v.why ==
        "no progress (the progress pattern) for 1m00s: rank 1 (g1) stopped at epoch 0 step 0; the others reached "
        "epoch 1 step 0");

  SECTION("a later step is progress") {
    StallVerdict on = w.observe(at(1090, {rank(0, 1090, Reading{1, 5}), rank(1, 1090, e1)}));
    CHECK_FALSE(on.stalled);
    CHECK(on.since == 1090);
  }
  SECTION("once the pattern has matched, a reading gone missing is no progress") {
    CHECK(w.observe(at(1100, {rank(0, 1100), rank(1, 1100, {}, 100.0)})).stalled);
  }
}

TEST_CASE("without a pattern or progress file: output or CPU time", "[watchdog]") {
  StallWatch w(60, 1000);
  for (double now = 1010; now <= 1030; now += 10) CHECK_FALSE(w.observe(outputs(now, {now, now, now, now})).stalled);

  SECTION("every task stops at once: stalled, and no rank stands out") {
    CHECK_FALSE(w.observe(outputs(1089, {1030, 1030, 1030, 1030})).stalled);
    StallVerdict v = w.observe(outputs(1090, {1030, 1030, 1030, 1030}));
    REQUIRE(v.stalled);
    CHECK(v.since == 1030);
    CHECK(v.stopped.empty());
    CHECK(v.why == "no progress (output or CPU time) for 1m00s: no rank stands out");

    // (4) progress resumes.
    StallVerdict on = w.observe(outputs(1101, {1100, 1030, 1030, 1030}));
    CHECK_FALSE(on.stalled);
    CHECK(on.since == 1100);
  }
  SECTION("a task still using CPU is progress") {
    for (double now = 1040; now <= 1200; now += 10) {
      StallVerdict v = w.observe(outputs(now, {1030, 1030, 1030, 1030}, {2, 2, 80, 2}));
      CHECK_FALSE(v.stalled);
      CHECK(v.since == now);
    }
    // busy_pct is the line: 5% of a core is not busy.
    CHECK(w.observe(outputs(1260, {1030, 1030, 1030, 1030}, {5, 5, 5, 5})).stalled);
  }
  SECTION("no CPU figures (no sampler) are not progress") {
    Observation o = outputs(1090, {1030, 1030, 1030, 1030});
    for (auto& t : o.tasks) t.cpu_pct.reset();
    CHECK(w.observe(o).stalled);
  }
}

TEST_CASE("a task silent long before the others is named", "[watchdog]") {
  StallWatch w(60, 1000);
  w.observe(outputs(1000, {1000, 1000, 1000, 1000}));
  w.observe(outputs(1030, {1030, 1030, 1030, 1000}));
  StallVerdict v = w.observe(outputs(1090, {1030, 1030, 1030, 1000}));
  REQUIRE(v.stalled);
  REQUIRE(v.stopped.size() == 1);
  CHECK(v.stopped[0].rank == 3);
  CHECK(v.stopped[0].node == "g2");
  CHECK(v.why == "no progress (output or CPU time) for 1m00s: rank 3 (g2) wrote its last output 30s before the others");

  SECTION("one that never wrote is not blamed: often only rank 0 prints") {
    StallVerdict none = w.observe(outputs(1095, {1030, 0, 1030, 1030}));
    CHECK(none.why == "no progress (output or CPU time) for 1m05s: no rank stands out");
  }
  SECTION("half of them") {
    StallVerdict half = w.observe(outputs(1095, {1030, 1030, 1000, 1010}));
    REQUIRE(half.stopped.size() == 2);
    CHECK(describe_tasks(half.stopped) == "ranks 2, 3 (g2)");
  }
  SECTION("more than half silent: they are the many, none is named") {
    StallVerdict most = w.observe(outputs(1095, {1030, 1000, 1000, 1010}));
    CHECK(most.stopped.empty());
    CHECK(most.why == "no progress (output or CPU time) for 1m05s: no rank stands out");
  }
  SECTION("a second apart is at once") {
    StallVerdict close = w.observe(outputs(1095, {1030, 1030, 1030, 1029}));
    CHECK(close.stopped.empty());
  }
}

TEST_CASE("describe_tasks names ranks, or tasks, and their nodes", "[watchdog]") {
  CHECK(describe_tasks({}) == "");
  CHECK(describe_tasks({stopped(1, 1, "g1")}) == "rank 1 (g1)");
  CHECK(describe_tasks({stopped(1, 1, "g1"), stopped(3, 3, "g2")}) == "ranks 1, 3 (g1, g2)");
  CHECK(describe_tasks({stopped(0, 0, "g1"), stopped(1, 1, "g1")}) == "ranks 0, 1 (g1)");
  CHECK(describe_tasks({stopped(1, std::nullopt, "g2")}) == "task 1 (g2)");
  CHECK(describe_tasks({stopped(0, std::nullopt, "g1"), stopped(2, std::nullopt, "g3")}) == "tasks 0, 2 (g1, g3)");
  CHECK(describe_tasks({stopped(2, std::nullopt, "")}) == "task 2");
}

TEST_CASE("the stall record survives its file", "[watchdog]") {
  test::TempDir tmp;
  std::string base = tmp.path + "/job_42";
  CHECK(stall_record_path(base) == base + ".stall.json");
  CHECK_FALSE(read_stall_record(base));

  StallRecord r;
  r.attempt = 1;
  r.stalled = true;
  r.since = 1795300000.5;
  r.detected_at = 1795300600.5;
  r.for_s = 600;
  r.stall_after_s = 600;
  r.action = "requeue";
  r.taken = WatchdogOutcome::Requeued;
  r.why = "no progress (the progress file) for 10m00s: rank 1 (g1) stopped at epoch 0 step 0";
  r.basis = "the progress file";
  r.detail = "rank 1 (g1) stopped at epoch 0 step 0";
  r.stopped = {stopped(1, 1, "g1"), stopped(2, std::nullopt, "g2")};
  r.stacks = {base + ".restart1.stacks.g1.txt", base + ".restart1.stacks.g2.txt"};
  r.culprit = "rank 1 (g1) is not in a collective — at hang.py:15 in on_step_end; rank 0 (g1) waits in all_reduce";
  r.culprit_named = true;
  r.resumed_at = 1795300700;
  write_file_atomic(stall_record_path(base), stall_record_json(r).dump() + "\n");

  auto back = read_stall_record(base);
  REQUIRE(back);
  CHECK(back->attempt == 1);
  CHECK(back->stalled);
  CHECK(back->since == 1795300000.5);
  CHECK(back->detected_at == 1795300600.5);
  CHECK(back->for_s == 600);
  CHECK(back->stall_after_s == 600);
  CHECK(back->action == "requeue");
  CHECK(back->taken == WatchdogOutcome::Requeued);
  CHECK(back->why == r.why);
  CHECK(back->basis == "the progress file");
  CHECK(back->detail == "rank 1 (g1) stopped at epoch 0 step 0");
  REQUIRE(back->stopped.size() == 2);
  CHECK(back->stopped[0].task == 1);
  CHECK(back->stopped[0].rank == 1);
  CHECK(back->stopped[0].node == "g1");
  CHECK(back->stopped[1].task == 2);
  CHECK_FALSE(back->stopped[1].rank);
  CHECK(back->stacks == r.stacks);
  CHECK(back->culprit == r.culprit);
  CHECK(back->culprit_named);
  CHECK(back->resumed_at == 1795300700);

  r.resumed_at.reset();
  write_file_atomic(stall_record_path(base), stall_record_json(r).dump() + "\n");
  CHECK_FALSE(read_stall_record(base)->resumed_at);

  write_file_atomic(stall_record_path(base), R"({"attempt": 1, "stall)");
  CHECK_FALSE(read_stall_record(base));
}

TEST_CASE("describe_stall: how long, what counted as progress, who stopped, where the stacks are", "[watchdog]") {
  StallRecord r;
  r.for_s = 75;
  r.why = "no progress (the progress pattern) for 1m00s: rank 1 (g1) stopped at epoch 0 step 0";
  r.basis = "the progress pattern";
  r.detail = "rank 1 (g1) stopped at epoch 0 step 0";
  CHECK(describe_stall(r) == "stalled 1m15s (no progress in the progress pattern): rank 1 (g1) stopped at epoch 0 step 0");
  CHECK(describe_stall(r, 3725) ==
        "stalled 1h02m (no progress in the progress pattern): rank 1 (g1) stopped at epoch 0 step 0");
  r.stacks = {"logs/j_7.restart0.stacks.g1.txt", "logs/j_7.restart0.stacks.g2.txt"};
  CHECK(describe_stall(r) ==
        "stalled 1m15s (no progress in the progress pattern): rank 1 (g1) stopped at epoch 0 step 0; stacks in "
        "logs/j_7.restart0.stacks.g1.txt, logs/j_7.restart0.stacks.g2.txt");

  SECTION("stacks that name a culprit: it is what the stall says") {
    r.culprit = "rank 1 (g1) is not in a collective — at hang.py:15 in on_step_end; rank 0 (g1) waits in all_reduce";
    r.culprit_named = true;
    CHECK(describe_stall(r) ==
          "stalled 1m15s: rank 1 (g1) is not in a collective — at hang.py:15 in on_step_end; rank 0 (g1) waits in "
          "all_reduce; stacks in logs/j_7.restart0.stacks.g1.txt, logs/j_7.restart0.stacks.g2.txt");
  }
  SECTION("stacks that name none: why, after the progress detail") {
    r.culprit = "no rank is in a collective, so the stacks name no culprit";
    CHECK(describe_stall(r) ==
          "stalled 1m15s (no progress in the progress pattern): rank 1 (g1) stopped at epoch 0 step 0; stacks in "
          "logs/j_7.restart0.stacks.g1.txt, logs/j_7.restart0.stacks.g2.txt: no rank is in a collective, so the "
          "stacks name no culprit");
  }
  SECTION("a record from before basis and detail were kept: its why") {
    r.basis.clear();
    r.detail.clear();
    r.stacks.clear();
    CHECK(describe_stall(r) == "stalled 1m15s: " + r.why);
  }
}
