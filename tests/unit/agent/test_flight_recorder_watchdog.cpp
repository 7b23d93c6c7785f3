// The watchdog's record of the Flight Recorder: how long it waits for the
// ranks' dumps after its ask for the stacks, what it counts and says when
// some or none came, and the culprit it names from them (the dumps are
// tests/unit/data/flight_recorder's, read and judged in
// test_flight_recorder.cpp).
#include <filesystem>
#include <fmt/format.h>

#include "catch.hpp"
#include "fake_runner.hpp"
#include "base/files.hpp"
#include "agent/flight_recorder.hpp"
#include "agent/flight_recorder_pipe.hpp"
#include "helpers.hpp"
#include "watch_fixture.hpp"
#include "agent/job_stacks.hpp"
#include "agent/job_watch.hpp"

using namespace ddpctl;
using namespace ddpctl::test;

namespace {

std::string fr_runs_dir() { return test::source_dir() + "/tests/unit/data/flight_recorder/"; }

// The watchdog's fixture (watch_fixture.hpp), cancelling on a stall, with
// the Flight Recorder's dumps asked for into <log base>.restart0.fr/.
struct FrWatch : WatchFixture {
  std::string prefix;
  FrWatch() {
    o.action = StallAction::Cancel;
    prefix = o.log_base + ".restart0.fr/rank_";
    o.fr_dump_prefix = prefix;
    std::filesystem::create_directories(o.log_base + ".restart0.fr");
    runner.on("scancel", {}, exits(0));
    // Both ranks printed at the same time: the stall names nobody by timing.
    both_write(1795300000);
  }
  // Node `node`'s sampler answered: no stacks it could read, its rank asked.
  void node_answers(const std::string& node, int rank, PipeAsk outcome) {
    write_file_atomic(stacks_path(o.log_base, 0, node),
                      fmt::format("# stacks of job 42's training processes on {}\n", node) +
                          fr_asks_section(o.log_base + ".restart0.fr/pipe_", {{rank, outcome, node}}) +
                          fmt::format("pid {} (rank {}), state S: no py-spy or gdb on {}, and it did not register for "
                                      "faulthandler\n",
                                      100 + rank, rank, node));
  }
  // Both nodes' stacks (and so their asks) come in `after_s` seconds after
  // the watchdog asked for them (it waits up to 60 s); no dump comes.
  void nodes_answer_after(double after_s) {
    o.stacks_wait_s = 60;
    double from = clock.monotonic();
    clock.on_sleep = [this, from, after_s] {
      if (clock.monotonic() - from >= after_s && !std::filesystem::exists(stacks_path(o.log_base, 0, "g1"))) {
        node_answers("g1", 0, PipeAsk::Asked);
        node_answers("g2", 1, PipeAsk::Asked);
      }
    };
  }
  // The ranks' dumps arrive while the watchdog waits (torch writes them
  // after the ask), `after_s` seconds into the wait.
  void dumps_arrive(const std::string& run, std::vector<int> ranks, double after_s = 0) {
    double from = clock.monotonic();
    clock.on_sleep = [this, run, ranks, from, after_s] {
      if (clock.monotonic() - from < after_s) return;
      for (int r : ranks)
        if (!std::filesystem::exists(fr_dump_path(prefix, r)))
          write_file_atomic(fr_dump_path(prefix, r), read_file(fr_runs_dir() + run + "/rank_" + std::to_string(r), 1 << 24));
    };
  }
};

}  // namespace

TEST_CASE("the watchdog names the culprit from the Flight Recorder when the stacks cannot", "[flight_recorder]") {
  FrWatch f;
  f.node_answers("g1", 0, PipeAsk::Asked);
  f.node_answers("g2", 1, PipeAsk::Asked);
  f.dumps_arrive("gloo-2ranks-rank1-sleeps", {0, 1});
  Watcher w(f.o, f.runner, f.clock, 1795300000);
  CHECK_FALSE(w.tick(1795300060));
  auto r = read_stall_record(f.o.log_base);
  REQUIRE(r);
  CHECK_FALSE(r->culprit_named);  // the stacks name nobody
  CHECK(r->flight_recorder_named);
  CHECK(r->flight_recorder_count == "2 of 2 ranks dumped");
  CHECK(r->flight_recorder ==
        "rank 1 (g2) never entered all_reduce #7 (process group 0); rank 0 (g1) is in it (at fr_hang.py:40 in main)");
  CHECK(r->flight_recorder_dumps == std::vector<std::string>{f.prefix + "0", f.prefix + "1"});
  REQUIRE(r->stopped.size() == 1);
  CHECK(r->stopped[0].rank == 1);
  CHECK(r->stopped[0].node == "g2");
  CHECK(r->taken == WatchdogOutcome::Cancelled);
  std::string said = describe_stall(*r);
  CHECK(said.rfind("stalled 1m00s: rank 1 (g2) never entered all_reduce #7 (process group 0); rank 0 (g1) is in it (at "
                   "fr_hang.py:40 in main) (flight recorder, 2 of 2 ranks dumped); stacks in ",
                   0) == 0);
  CHECK(said.find(": no stacks to tell the ranks apart") != std::string::npos);
}

TEST_CASE("the watchdog waits for the dumps 30 s from its ask for the stacks", "[flight_recorder]") {
  FrWatch f;
  SECTION("dumps 20 s late still count: torch's first dump symbolizes its stacks, slow on a busy node") {
    f.node_answers("g1", 0, PipeAsk::Asked);
    f.node_answers("g2", 1, PipeAsk::Asked);
    f.dumps_arrive("gloo-2ranks-rank1-sleeps", {0, 1}, 20);
    double start = f.clock.monotonic();
    Watcher w(f.o, f.runner, f.clock, 1795300000);
    CHECK_FALSE(w.tick(1795300060));
    auto r = read_stall_record(f.o.log_base);
    REQUIRE(r);
    CHECK(r->flight_recorder_count == "2 of 2 ranks dumped");
    CHECK(r->flight_recorder_named);
    // Collected as soon as both came, not at the end of the wait.
    CHECK(f.clock.monotonic() - start < 21);
  }
  SECTION("none came: the wait ends 30 s after the ask, the stacks' time counted in") {
    double start = f.clock.monotonic();
    f.nodes_answer_after(28);
    Watcher w(f.o, f.runner, f.clock, 1795300000);
    CHECK_FALSE(w.tick(1795300060));
    auto r = read_stall_record(f.o.log_base);
    REQUIRE(r);
    CHECK(r->flight_recorder == "no dump within 30s of the ask");
    CHECK(r->flight_recorder_count == "0 of 2 ranks dumped");
    CHECK(f.clock.monotonic() - start >= kFlightRecorderWait);
    CHECK(f.clock.monotonic() - start < kFlightRecorderWait + 1);
  }
  SECTION("stacks that took the whole wait still leave the dumps a grace of 2 s") {
    double start = f.clock.monotonic();
    f.nodes_answer_after(40);
    Watcher w(f.o, f.runner, f.clock, 1795300000);
    CHECK_FALSE(w.tick(1795300060));
    REQUIRE(read_stall_record(f.o.log_base));
    double waited = f.clock.monotonic() - start;
    CHECK(waited >= 40 + kFlightRecorderGrace);
    CHECK(waited < 40 + kFlightRecorderGrace + 1);
  }
}

TEST_CASE("the watchdog counts the dumps that came, and says why none", "[flight_recorder]") {
  FrWatch f;
  SECTION("one of two ranks dumped") {
    f.node_answers("g1", 0, PipeAsk::Asked);
    f.node_answers("g2", 1, PipeAsk::Asked);
    f.dumps_arrive("gloo-2ranks-rank1-sleeps", {0});
    Watcher w(f.o, f.runner, f.clock, 1795300000);
    CHECK_FALSE(w.tick(1795300060));
    auto r = read_stall_record(f.o.log_base);
    REQUIRE(r);
    CHECK(r->flight_recorder_count == "1 of 2 ranks dumped");
    CHECK(r->flight_recorder == "only rank 0 (g1)'s dump came, nothing to compare it with: it is in all_reduce #7 (process "
                                "group 0); no dump from rank 1 (g2)");
    CHECK_FALSE(r->flight_recorder_named);
    CHECK(describe_stall(*r).find("; flight recorder (1 of 2 ranks dumped): only rank 0 (g1)'s dump came") !=
          std::string::npos);
  }
  SECTION("no rank has a pipe (torch 1.13)") {
    f.node_answers("g1", 0, PipeAsk::NoPipe);
    f.node_answers("g2", 1, PipeAsk::NoPipe);
    Watcher w(f.o, f.runner, f.clock, 1795300000);
    CHECK_FALSE(w.tick(1795300060));
    auto r = read_stall_record(f.o.log_base);
    REQUIRE(r);
    CHECK(r->flight_recorder_count.empty());
    CHECK(r->flight_recorder ==
          "no dumps: no rank has a dump pipe (its torch has no Flight Recorder, as 1.13, or no process group yet)");
    CHECK(r->taken == WatchdogOutcome::Cancelled);
    CHECK(describe_stall(*r).find("; flight recorder: no dumps: no rank has a dump pipe") != std::string::npos);
  }
  SECTION("a pipe without a reader") {
    f.node_answers("g1", 0, PipeAsk::NoPipe);
    f.node_answers("g2", 1, PipeAsk::NoReader);
    Watcher w(f.o, f.runner, f.clock, 1795300000);
    CHECK_FALSE(w.tick(1795300060));
    CHECK(read_stall_record(f.o.log_base)->flight_recorder == "no dumps: rank 0 (g1): no pipe; rank 1 (g2): no reader");
  }
  SECTION("no Flight Recorder set for the run: the record says nothing of it") {
    f.o.fr_dump_prefix.clear();
    Watcher w(f.o, f.runner, f.clock, 1795300000);
    CHECK_FALSE(w.tick(1795300060));
    auto r = read_stall_record(f.o.log_base);
    REQUIRE(r);
    CHECK(r->flight_recorder.empty());
    CHECK(describe_stall(*r).find("flight recorder") == std::string::npos);
  }
}
