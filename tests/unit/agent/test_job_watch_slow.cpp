// The watchdog's use of the straggler watch (job_watch.hpp over
// straggler.hpp): a slow rank named from the trainer's progress file, or
// from the samples when the program says nothing, and its node left out of
// the requeue. The decision itself: test_straggler.cpp.
#include <algorithm>
#include "catch.hpp"
#include <fmt/format.h>

#include "fake_runner.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "watch_fixture.hpp"
#include "agent/job_watch.hpp"
#include "runs/job_files.hpp"
#include "agent/straggler.hpp"
#include "runs/usage.hpp"

using namespace ddpctl;
using test::exits;
using test::FakeClock;
using test::FakeRunner;
using test::set_mtime;
using test::T0;

namespace {

// Two nodes of a per-node launcher (one task a node, two ranks each), the
// stall far off, a slow rank named after 60 s.
struct SlowFixture : test::WatchFixture {
  SlowFixture() {
    o.per_gpu = false;
    o.stall_after_s = 120;
    o.slow_after_s = 60;
  }
  // Rank 0 of the trainer rewrites its progress file at `t`: each rank's work so far.
  void progress(double t, const std::vector<double>& work) {
    std::string list;
    for (double w : work) list += (list.empty() ? "" : ", ") + fmt::format("{:.3f}", w);
    std::string path = job_files::progress(o.log_base);
    write_file_atomic(path, fmt::format(R"({{"phase": "training", "epoch": 1, "step": {}, "rank_work_s": [{}]}})",
                                        static_cast<long long>(t - T0), list) + "\n");
    set_mtime(path, t);
  }
};

}  // namespace

TEST_CASE("the watcher names a slow rank from the trainer's progress file, and its requeue leaves the node out",
          "[job_agent][straggler]") {
  SlowFixture f;
  f.o.action = StallAction::Requeue;
  f.o.max_requeues = 1;
  f.runner.on("scontrol", {}, [](const std::vector<std::string>& argv) {
    if (argv[1] == "show") return exits(0, "JobId=42 JobName=train ReqNodeList=(null) ExcNodeList=(null) NodeList=g[1-2]\n");
    return exits(0);
  });
  // Four ranks, two a node; rank 3 (g2) needs 0.8 s of work for the others' 0.3 s.
  SECTION("exclude_slow") { f.o.exclude_slow = true; }
  SECTION("without exclude_slow") {}
  Watcher w(f.o, f.runner, f.clock, T0);
  double t = T0;
  for (int step = 1; t < T0 + 95; step++) {
    t = T0 + 5 * step;
    double s = 5 * step;
    f.progress(t, {0.06 * s, 0.06 * s, 0.06 * s, 0.16 * s});
    REQUIRE(w.tick(t));
  }
  auto r = read_slow_record(f.o.log_base);
  REQUIRE(r);
  CHECK(r->basis == "trainer");
  REQUIRE(r->slow.size() == 1);
  CHECK(r->slow[0].id.rank == 3);
  CHECK(r->slow[0].id.node == "g2");
  CHECK(r->slow[0].speed == Approx(0.38));  // 0.06 / 0.16, as the record keeps it
  CHECK(r->exclude == f.o.exclude_slow);
  CHECK(f.runner.calls.empty());  // naming it does nothing to the job
  CHECK_THAT(describe_slow(*r, t), Catch::StartsWith("rank 3 (g2) at 0.38× the others for "));

  // Then the job stalls: the watchdog requeues it.
  bool going = true;
  for (double u = t + 5; going && u <= t + 200; u += 5) going = w.tick(u);
  CHECK_FALSE(going);
  using Calls = std::vector<std::vector<std::string>>;
  if (f.o.exclude_slow)
    CHECK(f.runner.calls == Calls{{"scontrol", "requeuehold", "42"},
                                  {"scontrol", "show", "job", "-o", "42"},
                                  {"scontrol", "update", "JobId=42", "ExcNodeList=g2"},
                                  {"scontrol", "release", "42"}});
  else
    CHECK(f.runner.calls == Calls{{"scontrol", "requeue", "42"}});
}

TEST_CASE("the watcher reads the ranks' speeds from the samples when the program says nothing", "[job_agent][straggler]") {
  SlowFixture f;
  f.o.per_gpu = true;
  Watcher w(f.o, f.runner, f.clock, T0);
  // Each node's sampler: rank 0 computes 20% of the time and waits for rank 1
  // (asleep); rank 1 is throttled: 10% of a core used, 90% waited for.
  auto sample = [&](const std::string& node, int rank, double t, double cpu, double wait) {
    UsageSample s;
    s.node = node;
    s.t = t;
    s.interval_s = t > T0 ? 5 : 0;
    RankUsage u;
    u.rank = rank;
    u.task = rank;
    if (t > T0) u.cpu_pct = cpu, u.wait_pct = wait;
    s.ranks = {u};
    std::ofstream(usage_path(f.o.log_base, node), std::ios::app) << usage_sample_json(s).dump() << '\n';
  };
  double t = T0;
  for (; t <= T0 + 90; t += 5) {
    sample("g1", 0, t, 20, 1);
    sample("g2", 1, t, 10, 90);
    // Output, so that no stall is found meanwhile.
    std::ofstream(job_files::step_log(f.o.log_base, 0, 0), std::ios::app) << "step\n";
    set_mtime(job_files::step_log(f.o.log_base, 0, 0), t);
    REQUIRE(w.tick(t));
  }
  auto r = read_slow_record(f.o.log_base);
  REQUIRE(r);
  CHECK(r->basis == "cpu");
  REQUIRE(r->slow.size() == 1);
  CHECK(r->slow[0].id.rank == 1);
  CHECK(r->slow[0].id.node == "g2");
  CHECK(r->slow[0].speed == Approx(0.21));
  CHECK_THAT(describe_slow(*r, t), Catch::Contains("(by CPU time used or waited for)"));
}
