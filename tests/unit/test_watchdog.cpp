// The stall watchdog (watchdog.cpp) on recorded observation sequences, the
// record it keeps, the guides' troubleshooting over usage samples; and its
// use of files and commands (job_agent.cpp): the step observed from files
// in a temporary folder, the Watcher acting through a scripted runner.
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
#include "agent/job_agent.hpp"
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

UsageSample usage(const std::string& node, double t, int cpus, std::optional<double> cpu_pct,
                  std::vector<GpuUsage> gpus = {}, long long rss = 0) {
  UsageSample s;
  s.node = node;
  s.t = t;
  s.cpus = cpus;
  s.cpu_pct = cpu_pct;
  s.gpus = std::move(gpus);
  s.rss_bytes = rss;
  return s;
}

constexpr long long kGiB = 1024LL * 1024 * 1024;

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

TEST_CASE("usage hints: input-bound, over a long enough window", "[watchdog]") {
  std::map<std::string, std::vector<UsageSample>> samples;
  auto over = [](std::vector<double> times, double gpu_util, double cpu_pct) {
    std::vector<UsageSample> v;
    for (double t : times) v.push_back(usage("g1", t, 8, cpu_pct, {{0, gpu_util, 20000, 81920}}));
    return v;
  };
  samples["g1"] = over({820, 880, 940, 1000}, 30, 780);
  std::vector<Hint> h = usage_hints(samples, 1000);
  REQUIRE(h.size() == 1);
  CHECK(h[0].kind == "input-bound");
  CHECK(h[0].node == "g1");
  CHECK(h[0].text ==
        "input-bound on g1: GPUs 30% busy while the job's 8 CPUs are saturated (780%) for 3m00s; raise `workers` "
        "(data loader processes) or the CPUs per task");

  SECTION("too few samples") {
    samples["g1"] = over({940, 1000}, 30, 780);
    CHECK(usage_hints(samples, 1000).empty());
  }
  SECTION("a window too short: a passing dip is no news") {
    samples["g1"] = over({960, 980, 1000}, 30, 780);
    CHECK(usage_hints(samples, 1000).empty());
  }
  SECTION("samples older than the window") {
    samples["g1"] = over({500, 560, 620, 680}, 30, 780);
    CHECK(usage_hints(samples, 1000).empty());
  }
  SECTION("busy GPUs") {
    samples["g1"] = over({820, 880, 940, 1000}, 95, 780);
    CHECK(usage_hints(samples, 1000).empty());
  }
  SECTION("CPUs not saturated") {
    samples["g1"] = over({820, 880, 940, 1000}, 30, 300);
    CHECK(usage_hints(samples, 1000).empty());
  }
  SECTION("no GPU figures") {
    for (auto& s : samples["g1"]) s.gpus.clear();
    CHECK(usage_hints(samples, 1000).empty());
  }
}

TEST_CASE("usage hints: memory rising towards the job's limit", "[watchdog]") {
  std::map<std::string, std::vector<UsageSample>> samples;
  std::vector<UsageSample> v;
  long long rss[] = {12 * kGiB, 12 * kGiB + 2 * kGiB / 3, 12 * kGiB + 4 * kGiB / 3, 14 * kGiB};
  for (int i = 0; i < 4; i++) {
    v.push_back(usage("g2", 820 + 60 * i, 8, 100, {}, rss[i]));
    v.back().mem_limit_bytes = 16 * kGiB;
    v.back().mem_total_bytes = 512 * kGiB;
  }
  samples["g2"] = v;
  std::vector<Hint> h = usage_hints(samples, 1000);
  REQUIRE(h.size() == 1);
  CHECK(h[0].kind == "memory");
  CHECK(h[0].node == "g2");
  CHECK(h[0].text ==
        "memory on g2: 14.0 GiB of 16.0 GiB (the job's limit) and rising 683 MiB/min: the limit is reached in "
        "~3m00s; an OOM kill ends the job there");

  SECTION("high but steady") {
    for (auto& s : samples["g2"]) s.rss_bytes = 14 * kGiB;
    h = usage_hints(samples, 1000);
    REQUIRE(h.size() == 1);
    CHECK(h[0].text == "memory on g2: 14.0 GiB of 16.0 GiB (the job's limit); an OOM kill ends the job there");
  }
  SECTION("no limit: the node's memory") {
    for (auto& s : samples["g2"]) s.mem_limit_bytes = 0, s.mem_total_bytes = 16 * kGiB;
    h = usage_hints(samples, 1000);
    REQUIRE(h.size() == 1);
    CHECK_THAT(h[0].text, Catch::StartsWith("memory on g2: 14.0 GiB of 16.0 GiB (the node's memory) and rising"));
  }
  SECTION("well below the limit") {
    for (auto& s : samples["g2"]) s.mem_limit_bytes = 64 * kGiB;
    CHECK(usage_hints(samples, 1000).empty());
  }
  SECTION("a window too short") {
    samples["g2"].erase(samples["g2"].begin(), samples["g2"].begin() + 2);
    CHECK(usage_hints(samples, 1000).empty());
  }
}

TEST_CASE("usage hints: a GPU's memory near full", "[watchdog]") {
  std::map<std::string, std::vector<UsageSample>> samples;
  for (double t : {820, 880, 940, 1000})
    samples["g1"].push_back(usage("g1", t, 8, 200, {{0, 90, 79000, 81920}, {1, 90, 40000, 81920}}));
  std::vector<Hint> h = usage_hints(samples, 1000);
  REQUIRE(h.size() == 1);
  CHECK(h[0].kind == "gpu-memory");
  CHECK(h[0].node == "g1");
  CHECK(h[0].text == "GPU 0 on g1: 77.1 of 80.0 GiB used; a larger batch runs out of memory");

  samples["g1"].back().gpus[0].mem_used_mib = 70000;  // only the latest sample counts
  CHECK(usage_hints(samples, 1000).empty());
}

// ---- job_agent.cpp: the watchdog's use of files and commands ----

namespace {

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

TEST_CASE("the watcher with action requeue requeues while restarts are left, else cancels", "[job_agent]") {
  WatchFixture f;
  f.o.action = StallAction::Requeue;
  f.o.max_restarts = 2;
  f.runner.on("scontrol", {"requeue"}, exits(0));
  f.runner.on("scancel", {}, exits(0));

  SECTION("restarts left") {
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
  SECTION("the last restart used") {
    f.o.attempt = 2;
    f.both_write(T0);
    Watcher w(f.o, f.runner, f.clock, T0);
    CHECK_FALSE(w.tick(T0 + 60));
    CHECK(f.runner.calls == std::vector<std::vector<std::string>>{{"scancel", "42"}});
    CHECK(read_stall_record(f.o.log_base)->taken == WatchdogOutcome::Cancelled);
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

namespace {

// What a scope writes to std::cerr.
struct CaptureCerr {
  std::ostringstream text;
  std::streambuf* old = std::cerr.rdbuf(text.rdbuf());
  ~CaptureCerr() { std::cerr.rdbuf(old); }
};

}  // namespace

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

// Job 42's sampler on node g1, on a fake clock, with no GPU and an empty /proc.
struct SamplerOnG1 {
  test::TempDir tmp, proc;
  FakeRunner runner;
  FakeClock clock;
  FakeEnvironment env;
  SlurmClient slurm{runner};
  Context ctx{runner, slurm, clock, env};
  SampleOptions o;
  explicit SamplerOnG1(std::map<std::string, std::string> vars) {
    runner.on("nvidia-smi", {}, test::not_found());
    env.vars = std::move(vars);
    o.log_base = tmp.path + "/job_42";
    o.proc_root = proc.path;
  }
};

TEST_CASE("the sampler's loop on a clock: a sample every interval, the stacks asked for answered between", "[job_agent]") {
  SamplerOnG1 f({{"SLURM_JOB_ID", "42"}, {"SLURMD_NODENAME", "g1"}, {"SLURM_RESTART_COUNT", "1"}, {"SLURM_CPUS_ON_NODE", "8"}});
  FakeClock& clock = f.clock;
  FakeRunner& runner = f.runner;
  Context& ctx = f.ctx;
  SampleOptions& o = f.o;
  o.interval_s = 5;
  o.count = 3;
  double start = clock.wall();
  // The watchdog asks for the stacks 7 s in.
  std::string request = stacks_request_path(o.log_base, 1);
  clock.on_sleep = [&] {
    if (clock.wall() >= start + 7 && !std::filesystem::exists(request)) write_file_atomic(request, "1\n");
  };
  run_sampler(o, ctx);
  std::vector<double> times;
  for (const auto& line : split(read_file(usage_path(o.log_base, "g1")), '\n'))
    if (!line.empty()) times.push_back(nlohmann::json::parse(line).at("t").get<double>());
  CHECK(times == std::vector<double>{start, start + 5, start + 10});
  CHECK(clock.sleeps == 20);  // half a second apart, none after the last sample
  CHECK(read_file(stacks_path(o.log_base, 1, "g1")) ==
        "# stacks of job 42's training processes on g1\n(no training process found)\n");
  CHECK(runner.count("nvidia-smi") == 1);  // not on this node: not asked again
}

TEST_CASE("the sampler ends when the process that started it is no longer its parent", "[job_agent]") {
  SamplerOnG1 f({{"SLURM_JOB_ID", "42"}, {"SLURMD_NODENAME", "g1"}});
  FakeClock& clock = f.clock;
  Context& ctx = f.ctx;
  SampleOptions& o = f.o;
  o.count = 2;
  o.parent_pid = ::getppid();  // still this process's parent: both samples are taken
  run_sampler(o, ctx);
  CHECK(split(read_file(usage_path(o.log_base, "g1")), '\n').size() == 3);  // two lines and the empty rest
  // The program it was started for has ended (this process was handed to
  // another parent): not one more sample, no sleep.
  o.count = 0;
  o.parent_pid = ::getppid() + 1;
  int sleeps = clock.sleeps;
  run_sampler(o, ctx);
  CHECK(split(read_file(usage_path(o.log_base, "g1")), '\n').size() == 3);
  CHECK(clock.sleeps == sleeps);
}

TEST_CASE("job_place: scontrol and scancel act on a job by its id, on an array task as <array>_<task>", "[job_agent]") {
  FakeEnvironment env;
  env.vars = {{"SLURM_JOB_ID", "42"}, {"SLURM_RESTART_COUNT", "1"}};
  CHECK(job_place(env).slurm_id == "42");
  // The array's last task runs under the array's own id: `scontrol requeue
  // 42` would requeue every task of array 42 (Slurm 22.05, seen).
  env.vars["SLURM_ARRAY_JOB_ID"] = "42";
  env.vars["SLURM_ARRAY_TASK_ID"] = "1";
  JobPlace p = job_place(env);
  CHECK(p.job_id == "42");  // its logs and processes are still the job's own
  CHECK(p.slurm_id == "42_1");
  env.vars["SLURM_JOB_ID"] = "43";
  env.vars["SLURM_ARRAY_TASK_ID"] = "0";
  CHECK(job_place(env).slurm_id == "42_0");
}

TEST_CASE("requeue_job: a plain requeue, or hold, exclude, release", "[job_agent]") {
  FakeRunner runner;
  std::vector<std::string> failing;  // scontrol subcommands that fail
  runner.on("scontrol", {}, [&](const std::vector<std::string>& argv) {
    if (std::find(failing.begin(), failing.end(), argv[1]) != failing.end())
      return exits(1, "", "scontrol: error: Job is no longer pending execution for job 42\n");
    if (argv[1] == "show") return exits(0, "JobId=42 JobName=train ReqNodeList=(null) ExcNodeList=g3 NodeList=g[1-2]\n");
    return exits(0);
  });
  using Calls = std::vector<std::vector<std::string>>;

  SECTION("nothing to exclude") {
    CHECK_FALSE(requeue_job(runner, "42", {}));
    CHECK(runner.calls == Calls{{"scontrol", "requeue", "42"}});
  }
  SECTION("excluding nodes: Slurm takes ExcNodeList only from a pending job") {
    CHECK_FALSE(requeue_job(runner, "42", {"g2"}));
    CHECK(runner.calls == Calls{{"scontrol", "requeuehold", "42"},
                                {"scontrol", "show", "job", "-o", "42"},
                                {"scontrol", "update", "JobId=42", "ExcNodeList=g3,g2"},
                                {"scontrol", "release", "42"}});
  }
  SECTION("the hold refused: a plain requeue, and why the nodes stay") {
    failing = {"requeuehold"};
    auto why = requeue_job(runner, "42", {"g2"});
    REQUIRE(why);
    CHECK(*why ==
          "the nodes could not be excluded (scontrol exited with status 1: scontrol: error: Job is no longer pending "
          "execution for job 42)");
    CHECK(runner.calls == Calls{{"scontrol", "requeuehold", "42"}, {"scontrol", "requeue", "42"}});
  }
  SECTION("the update refused: released all the same") {
    failing = {"update"};
    auto why = requeue_job(runner, "42", {"g2"});
    REQUIRE(why);
    CHECK_THAT(*why, Catch::StartsWith("scontrol exited with status 1"));
    CHECK(runner.calls.back() == std::vector<std::string>{"scontrol", "release", "42"});
  }
  SECTION("the release refused: the user is told to release it") {
    failing = {"release"};
    auto why = requeue_job(runner, "42", {"g2"});
    REQUIRE(why);
    CHECK_THAT(*why, Catch::StartsWith("scontrol release failed: scontrol exited with status 1"));
    CHECK_THAT(*why, Catch::EndsWith("; release the job by hand"));
  }
}

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

TEST_CASE("dump_stacks dumps the training processes with py-spy, else gdb, else says so", "[job_agent]") {
  test::TempDir proc;
  auto process = [&](int pid, const std::vector<std::string>& env, int ppid = 1) {
    std::string dir = proc.path + "/" + std::to_string(pid);
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/stat") << pid << " (python) S " << ppid
                                 << " 1 1 0 -1 0 0 0 0 0 100 20 0 0 20 0 1 0 5000 1000000 2000 0 0 0\n";
    std::string text;
    for (const auto& v : env) text += v + '\0';
    std::ofstream(dir + "/environ", std::ios::binary) << text;
  };
  FakeRunner runner;
  FakeClock clock;
  const std::string head = "# stacks of job 42's training processes on g1\n";

  SECTION("no training process") {
    CHECK(dump_stacks(runner, clock, proc.path, {"42", "g1", "", ""}, 5) == head + "(no training process found)\n");
  }
  process(200, {"SLURM_JOB_ID=42", "SLURMD_NODENAME=g1", "SLURM_PROCID=0", "RANK=0", "DDPCTL_TRAINING=1"});
  process(201, {"SLURM_JOB_ID=42", "SLURMD_NODENAME=g1", "SLURM_PROCID=0"});  // the sampler's shell
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
