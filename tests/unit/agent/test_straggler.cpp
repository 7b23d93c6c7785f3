// Stragglers (straggler.cpp): relative speeds from each rank's work, the
// decision over readings in time (a rank slow for minutes is named, a
// passing dip is not), the record and its words, and the spec and script
// that set it up. The watchdog's use of it: test_job_watch_slow.cpp.
#include <algorithm>
#include "catch.hpp"
#include <filesystem>
#include <fmt/format.h>
#include <fstream>

#include "spec/cluster.hpp"
#include "fake_runner.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "runs/job_files.hpp"
#include "spec/spec.hpp"
#include "agent/straggler.hpp"
#include "runs/usage.hpp"

using namespace ddpctl;
using test::exits;
using test::FakeClock;
using test::FakeRunner;

namespace {

using test::T0;

RankId rank_on(int r, const std::string& node) { return {r, r, node}; }

// Ranks 0.. on g1, g2, ... one a node, each working `busy` of a 60 s span.
std::vector<RankWork> work(const std::vector<double>& busy) {
  std::vector<RankWork> out;
  for (size_t r = 0; r < busy.size(); r++)
    out.push_back({rank_on(static_cast<int>(r), fmt::format("g{}", r + 1)), busy[r] * 60, 60});
  return out;
}

std::vector<int> ranks_of(const std::vector<SlowRank>& named) {
  std::vector<int> out;
  for (const auto& s : named) out.push_back(*s.id.rank);
  return out;
}

// Feeds `busy` (each rank's share of each span) every 15 s from `from` to `to`; the last verdict.
StragglerVerdict feed(StragglerWatch& w, double from, double to, const std::vector<double>& busy,
                      SpeedBasis basis = SpeedBasis::TrainerWork) {
  StragglerVerdict v;
  for (double t = from; t <= to; t += 15) v = w.observe(t, basis, work(busy));
  return v;
}

}  // namespace

TEST_CASE("relative speed: the least-working rank's work over each rank's", "[straggler]") {
  auto s = relative_speeds(work({0.2, 0.4, 0.2, 0.25}));
  REQUIRE(s.size() == 4);
  CHECK(s[0].speed == Approx(1));
  CHECK(s[1].speed == Approx(0.5));  // twice the work for the same steps
  CHECK(s[2].speed == Approx(1));    // a tie for the fastest
  CHECK(s[3].speed == Approx(0.8));
  CHECK(s[1].busy == Approx(0.4));

  SECTION("a rank that did no work in the span has no speed") {
    auto idle = relative_speeds(work({0.5, 0, 1}));
    REQUIRE(idle.size() == 2);
    CHECK(*idle[0].id.rank == 0);
    CHECK(idle[1].speed == Approx(0.5));
  }
  SECTION("a single rank has nothing to compare with") {
    CHECK(relative_speeds(work({0.9})).empty());
    CHECK(relative_speeds(work({0.9, 0})).empty());
  }
}

TEST_CASE("the work window: the work over the last window_s, from cumulative counters", "[straggler]") {
  WorkWindow w(30);
  auto counters = [](double a, double b, double wall) {
    return std::vector<RankCounter>{{rank_on(0, "g1"), a, wall}, {rank_on(1, "g2"), b, wall}};
  };
  CHECK_FALSE(w.push(T0, counters(0, 0, 0)));
  CHECK_FALSE(w.push(T0 + 20, counters(2, 8, 20)));  // not a window yet
  auto r = w.push(T0 + 30, counters(3, 12, 30));
  REQUIRE(r);
  REQUIRE(r->size() == 2);
  CHECK((*r)[0].work_s == Approx(3));
  CHECK((*r)[0].span_s == Approx(30));
  CHECK((*r)[1].work_s == Approx(12));
  // The next one spans from the newest counters at least 30 s old (T0 + 20).
  r = w.push(T0 + 50, counters(5, 20, 50));
  REQUIRE(r);
  CHECK((*r)[1].work_s == Approx(12));
  CHECK((*r)[1].span_s == Approx(30));

  SECTION("a counter that goes down (the program started again) starts the history again") {
    CHECK_FALSE(w.push(T0 + 60, counters(1, 1, 60)));
    CHECK_FALSE(w.push(T0 + 80, counters(2, 5, 80)));
    r = w.push(T0 + 90, counters(4, 9, 90));
    REQUIRE(r);
    CHECK((*r)[1].work_s == Approx(8));
  }
}

TEST_CASE("a rank slow for slow_after is named, not before", "[straggler]") {
  StragglerWatch w(300);
  // Rank 2 works 0.9 of each span where the others work 0.45: 0.5× them.
  StragglerVerdict v = feed(w, T0, T0 + 285, {0.45, 0.45, 0.9, 0.45});
  CHECK(v.named.empty());
  CHECK_FALSE(v.changed);
  REQUIRE(v.speeds.size() == 4);
  CHECK(v.speeds[2].speed == Approx(0.5));
  v = w.observe(T0 + 300, SpeedBasis::TrainerWork, work({0.45, 0.45, 0.9, 0.45}));
  CHECK(v.changed);
  REQUIRE(v.named.size() == 1);
  CHECK(v.named[0].id.rank == 2);
  CHECK(v.named[0].id.node == "g3");
  CHECK(v.named[0].speed == Approx(0.5));
  CHECK(v.named[0].since == T0);
  // Still slow: named, no news.
  v = w.observe(T0 + 315, SpeedBasis::TrainerWork, work({0.45, 0.45, 0.9, 0.45}));
  CHECK_FALSE(v.changed);
  CHECK(ranks_of(v.named) == std::vector<int>{2});

  SECTION("it recovers: no longer named, and remembered") {
    v = w.observe(T0 + 330, SpeedBasis::TrainerWork, work({0.45, 0.45, 0.5, 0.45}));
    CHECK(v.changed);
    CHECK(v.named.empty());
    REQUIRE(w.recovered().size() == 1);
    CHECK(w.recovered()[0].id.rank == 2);
    CHECK(w.recovered()[0].until == T0 + 330);
  }
}

TEST_CASE("a passing dip is not named", "[straggler]") {
  StragglerWatch w(300);
  feed(w, T0, T0 + 200, {0.5, 0.5, 0.5, 0.5});
  // Rank 1 at 0.25× for four minutes, then back at speed: the run ends before slow_after.
  StragglerVerdict v = feed(w, T0 + 215, T0 + 455, {0.2, 0.8, 0.2, 0.2});
  CHECK(v.named.empty());
  v = w.observe(T0 + 470, SpeedBasis::TrainerWork, work({0.5, 0.5, 0.5, 0.5}));
  CHECK(v.named.empty());
  // A second dip starts its own run from zero.
  v = feed(w, T0 + 485, T0 + 770, {0.2, 0.8, 0.2, 0.2});
  CHECK(v.named.empty());
  CHECK(w.recovered().empty());
}

TEST_CASE("a single-rank job names nobody", "[straggler]") {
  StragglerWatch w(60);
  StragglerVerdict v = feed(w, T0, T0 + 600, {0.9});
  CHECK(v.speeds.empty());
  CHECK(v.named.empty());
}

TEST_CASE("ties: ranks equally slow are named together, ranks all alike, none", "[straggler]") {
  SECTION("two of four equally slow") {
    StragglerWatch w(60);
    StragglerVerdict v = feed(w, T0, T0 + 60, {0.3, 0.9, 0.9, 0.3});
    CHECK(ranks_of(v.named) == std::vector<int>{1, 2});
  }
  SECTION("every rank alike") {
    StragglerWatch w(60);
    StragglerVerdict v = feed(w, T0, T0 + 120, {0.6, 0.6, 0.6, 0.6});
    CHECK(v.named.empty());
    CHECK(v.none_because.empty());
    for (const auto& s : v.speeds) CHECK(s.speed == Approx(1));
  }
  SECTION("more than half below: the fast ones are the odd ones out, none is named") {
    StragglerWatch w(60);
    StragglerVerdict v = feed(w, T0, T0 + 120, {0.3, 0.9, 0.9, 0.9});
    CHECK(v.named.empty());
    CHECK(v.none_because == "3 of 4 ranks are below 0.7× the fastest: the fastest are the odd ones out");
  }
  SECTION("two ranks, one slow: half is not more than half") {
    StragglerWatch w(60);
    CHECK(ranks_of(feed(w, T0, T0 + 60, {0.3, 0.9}).named) == std::vector<int>{1});
  }
  SECTION("just at the threshold is not below it") {
    StragglerWatch w(60);
    CHECK(feed(w, T0, T0 + 120, {0.7, 1.0}).named.empty());
  }
}

TEST_CASE("by CPU time, a rank mostly idle keeps nobody waiting", "[straggler]") {
  // Rank 1 uses twice rank 0's CPU, but only 0.4 of a core: not a straggler.
  StragglerWatch w(60);
  CHECK(feed(w, T0, T0 + 120, {0.2, 0.4}, SpeedBasis::CpuDemand).named.empty());
  // Throttled: it wants a core all the time and gets a fraction of it.
  StragglerWatch t(60);
  CHECK(ranks_of(feed(t, T0, T0 + 120, {0.2, 1.0}, SpeedBasis::CpuDemand).named) == std::vector<int>{1});
}

TEST_CASE("the trainer's progress file carries each rank's work", "[straggler]") {
  auto w = progress_rank_work(R"({"phase": "training", "epoch": 1, "step": 12, "updated": 1795300000, "rank_work_s": [1.5, 6.25]})");
  REQUIRE(w);
  CHECK(*w == std::vector<double>{1.5, 6.25});
  CHECK_FALSE(progress_rank_work(R"({"phase": "training", "epoch": 1})"));  // another program's, or a GPU's
  CHECK_FALSE(progress_rank_work(R"({"rank_work_s": [1, "x"]})"));
  CHECK_FALSE(progress_rank_work("{\"rank_work_s\": [1, 2"));  // torn
}

TEST_CASE("from the samples: each rank's CPU time used or waited for, summed", "[straggler]") {
  auto sample = [](const std::string& node, double t, std::vector<RankUsage> ranks) {
    UsageSample s;
    s.node = node;
    s.t = t;
    s.interval_s = 5;
    s.ranks = std::move(ranks);
    return s;
  };
  auto ranked = [](int r, std::optional<double> cpu, std::optional<double> wait) {
    RankUsage u;
    u.rank = r;
    u.task = r;
    u.cpu_pct = cpu;
    u.wait_pct = wait;
    return u;
  };
  RankUsage launcher;  // a node's launcher (torchrun's agent): a task, no rank
  launcher.task = 1;
  launcher.cpu_pct = 1;
  std::map<std::string, std::vector<UsageSample>> samples = {
      {"g1", {sample("g1", T0, {ranked(0, std::nullopt, std::nullopt)}), sample("g1", T0 + 5, {ranked(0, 40, 5)})}},
      {"g2", {sample("g2", T0 + 5, {ranked(1, 10, 90), launcher})}}};
  SampleWork sw;
  std::vector<RankCounter> c = sw.add(samples);
  REQUIRE(c.size() == 2);  // the launcher is no rank
  CHECK(c[0].id.node == "g1");
  CHECK(c[0].work_s == Approx(0.45 * 5));
  CHECK(c[0].wall_s == Approx(5));
  CHECK(c[1].id.rank == 1);
  CHECK(c[1].work_s == Approx(1.0 * 5));
  // Read again with one new sample: only that one is added.
  samples["g2"].push_back(sample("g2", T0 + 10, {ranked(1, 20, 80)}));
  c = sw.add(samples);
  CHECK(c[1].work_s == Approx(10));
  CHECK(c[1].wall_s == Approx(10));
  CHECK(c[0].wall_s == Approx(5));
}

TEST_CASE("the nodes to exclude: the slow ranks', unless that is every node", "[straggler]") {
  std::vector<SlowRank> named = {{rank_on(1, "g2"), 0.4, T0, std::nullopt}, {rank_on(3, "g2"), 0.5, T0, std::nullopt}};
  std::string note;
  CHECK(slow_nodes_to_exclude(named, {"g1", "g2", "g3"}, &note) == std::vector<std::string>{"g2"});
  CHECK(note.empty());
  CHECK(slow_nodes_to_exclude(named, {"g2"}, &note).empty());
  CHECK(note == "its only node is not excluded");
  named.push_back({rank_on(0, "g1"), 0.5, T0, std::nullopt});
  CHECK(slow_nodes_to_exclude(named, {"g1", "g2"}, &note).empty());
  CHECK(note == "every node has a slow rank: the ranks, not the nodes, are slower; none is excluded");
}

TEST_CASE("the slow record survives its file and says who, how slow, since when, by what", "[straggler]") {
  test::TempDir tmp;
  std::string base = tmp.path + "/job_42";
  CHECK_FALSE(read_slow_record(base));
  SlowRecord r;
  r.attempt = 1;
  r.basis = "trainer";
  r.slow_after_s = 300;
  r.updated = T0 + 400;
  r.speeds = {{rank_on(0, "g1"), 1, 0.2}, {rank_on(5, "g3"), 0.554, 0.36}};
  r.slow = {{rank_on(5, "g3"), 0.554, T0, std::nullopt}};
  r.recovered = {{rank_on(2, "g2"), 0.61, T0 - 900, T0 - 300}};
  r.exclude = true;
  r.exclude_nodes = {"g3"};
  write_file_atomic(job_files::slow(base), slow_record_json(r).dump() + "\n");
  auto back = read_slow_record(base);
  REQUIRE(back);
  CHECK(back->attempt == 1);
  CHECK(back->basis == "trainer");
  REQUIRE(back->speeds.size() == 2);
  CHECK(back->speeds[1].speed == Approx(0.55));
  REQUIRE(back->slow.size() == 1);
  CHECK(back->slow[0].id.rank == 5);
  CHECK(back->slow[0].id.node == "g3");
  CHECK(back->slow[0].since == T0);
  CHECK_FALSE(back->slow[0].until);
  REQUIRE(back->recovered.size() == 1);
  CHECK(back->recovered[0].until == T0 - 300);
  CHECK(back->exclude_nodes == std::vector<std::string>{"g3"});

  CHECK(describe_slow(*back, T0 + 190) ==
        "rank 5 (g3) at 0.55× the others for 3m10s (by the trainer's loading and forward time per batch); "
        "a requeue leaves out g3");
  CHECK(describe_slow_history(*back) ==
        "rank 5 (g3) at 0.55× the others for 6m40s, rank 2 (g2) was at 0.61× the others for 10m00s "
        "(by the trainer's loading and forward time per batch)");
  back->exclude = false;
  CHECK(describe_slow(*back, T0 + 190) ==
        "rank 5 (g3) at 0.55× the others for 3m10s (by the trainer's loading and forward time per batch)");
  back->slow.clear();
  CHECK(describe_slow(*back, T0 + 190).empty());

  SECTION("the requeue takes its nodes from this attempt's record, with exclude on") {
    std::string why;
    CHECK(recorded_slow_nodes(base, 1, &why) == std::vector<std::string>{"g3"});
    CHECK_THAT(why, Catch::StartsWith("rank 5 (g3) at 0.55× the others for 6m40s"));
    CHECK(recorded_slow_nodes(base, 2, &why).empty());  // another attempt's
    r.exclude = false;
    write_file_atomic(job_files::slow(base), slow_record_json(r).dump() + "\n");
    CHECK(recorded_slow_nodes(base, 1, &why).empty());
  }
  SECTION("a torn record is none") {
    write_file_atomic(job_files::slow(base), "{\"attempt\": 1, \"slow\": [");
    CHECK_FALSE(read_slow_record(base));
  }
}
