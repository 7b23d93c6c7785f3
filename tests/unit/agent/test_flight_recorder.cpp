// The Flight Recorder: recorded dumps of torch 2.14 with Gloo and
// hand-written ones of NCCL's shape (tests/unit/data/flight_recorder/README.md
// says how each was made), read and judged; the pipes a node's agent writes
// to; collecting the dumps (the watchdog's record of them:
// test_flight_recorder_watchdog.cpp).
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catch.hpp"
#include "fake_runner.hpp"
#include "base/files.hpp"
#include "agent/flight_recorder.hpp"
#include "agent/flight_recorder_pipe.hpp"
#include "helpers.hpp"

using namespace ddpctl;
using namespace ddpctl::test;

namespace {

std::string data_dir() { return test::source_dir() + "/tests/unit/data/flight_recorder/"; }

std::vector<FrDump> dumps(const std::string& run, int ranks) {
  std::vector<FrDump> out;
  for (int r = 0; r < ranks; r++)
    out.push_back(read_fr_dump(read_file(data_dir() + run + "/rank_" + std::to_string(r), 1 << 24), r));
  return out;
}

}  // namespace

TEST_CASE("a Gloo dump of torch 2.14 is read into its entries", "[flight_recorder]") {
  auto d = dumps("gloo-2ranks-rank1-sleeps", 2);
  REQUIRE(d[0].entries.size() == 7);
  const FrEntry& last = d[0].entries.back();
  CHECK(last.group == "0");
  CHECK(last.group_desc == "default_pg");
  CHECK(last.seq == 7);
  CHECK(last.backend == "gloo");
  CHECK(last.op == "all_reduce");
  CHECK(last.state == "scheduled");  // Gloo has no events: never "started" or "completed"
  CHECK_FALSE(last.retired);
  CHECK_FALSE(last.done);
  CHECK(d[0].entries[5].done);  // retired: its work ended
  CHECK(last.sizes == "[[4]]");
  CHECK(last.where == "fr_hang.py:40 in main");
  // Gloo names every group's ranks with an empty name: nothing is taken from it.
  CHECK(d[0].group_ranks.empty());
  CHECK(d[1].entries.back().seq == 6);
  CHECK(d[1].entries.back().done);
}

TEST_CASE("an NCCL-shaped dump: its states say what is done", "[flight_recorder]") {
  auto d = dumps("nccl-4ranks-rank2-missing", 4);
  CHECK(d[0].group_ranks.at("0") == std::vector<int>{0, 1, 2, 3});
  CHECK(d[0].entries.back().backend == "nccl");
  CHECK(d[0].entries.back().state == "started");
  CHECK_FALSE(d[0].entries.back().done);
  CHECK(d[2].entries.back().seq == 1233);
  CHECK(d[2].entries.back().done);
  CHECK(d[0].entries.back().where == "train.py:88 in train_step");
}

TEST_CASE("not a dump: the reader says why", "[flight_recorder]") {
  CHECK_THROWS_WITH(parse_fr_dump(nlohmann::json::parse(R"({"entries": []})"), 0), Catch::Contains("no \"version\""));
  CHECK_THROWS_WITH(parse_fr_dump(nlohmann::json::parse(R"({"version": "2.10", "entries": 3})"), 0),
                    Catch::Contains("not a list"));
  CHECK(parse_fr_dump(nlohmann::json::parse(R"({"version": "2.10"})"), 0).entries.empty());
}

TEST_CASE("the rank that never entered the collective the others are in is named", "[flight_recorder]") {
  SECTION("Gloo, 2 ranks: rank 1 sleeps in a callback") {
    FrVerdict v = analyze_flight_recorder(dumps("gloo-2ranks-rank1-sleeps", 2), {}, {{0, "g1"}, {1, "g2"}});
    CHECK(v.kind == FrVerdictKind::Named);
    CHECK(v.culprits == std::vector<int>{1});
    CHECK(v.text == "rank 1 (g2) never entered all_reduce #7 (process group 0); rank 0 (g1) is in it (at fr_hang.py:40 in main)");
  }
  SECTION("Gloo, 4 ranks and a group of ranks 0 and 1 that finished its only collective") {
    FrVerdict v = analyze_flight_recorder(dumps("gloo-4ranks-rank3-sleeps", 4));
    CHECK(v.kind == FrVerdictKind::Named);
    CHECK(v.culprits == std::vector<int>{3});
    CHECK(v.text == "rank 3 never entered all_reduce #7 (process group 0); ranks 0–2 are in it (at fr_hang.py:40 in main)");
  }
  SECTION("NCCL's shape, 4 ranks: rank 2 never enqueued #1234") {
    FrVerdict v = analyze_flight_recorder(dumps("nccl-4ranks-rank2-missing", 4));
    CHECK(v.kind == FrVerdictKind::Named);
    CHECK(v.culprits == std::vector<int>{2});
    CHECK(v.text == "rank 2 never entered all_reduce #1234 (process group 0); ranks 0, 1, 3 are in it (at train.py:88 in "
                    "train_step)");
  }
  SECTION("a rank whose dump did not come is said, not judged") {
    auto d = dumps("gloo-4ranks-rank3-sleeps", 4);
    d.erase(d.begin() + 1);
    FrVerdict v = analyze_flight_recorder(d, {1});
    CHECK(v.culprits == std::vector<int>{3});
    CHECK(v.text == "rank 3 never entered all_reduce #7 (process group 0); ranks 0, 2 are in it (at fr_hang.py:40 in "
                    "main); no dump from rank 1");
  }
}

TEST_CASE("ranks in different collectives at the same number disagree", "[flight_recorder]") {
  SECTION("Gloo: rank 1 broadcasts where rank 0 all_reduces") {
    FrVerdict v = analyze_flight_recorder(dumps("gloo-2ranks-rank1-broadcasts", 2));
    CHECK(v.kind == FrVerdictKind::Mismatch);
    CHECK(v.culprits.empty());  // one against one: neither is the odd one out
    CHECK(v.text == "ranks disagree on collective #7 of process group 0: rank 0 in all_reduce; rank 1 in broadcast");
  }
  SECTION("NCCL's shape: the same all_reduce with different sizes") {
    FrVerdict v = analyze_flight_recorder(dumps("nccl-2ranks-size-mismatch", 2));
    CHECK(v.kind == FrVerdictKind::Mismatch);
    CHECK(v.text == "ranks disagree on collective #88 of process group 0: rank 0 in all_reduce [[1024]]; rank 1 in "
                    "all_reduce [[2048]]");
  }
  SECTION("a minority against a majority is named") {
    auto d = dumps("nccl-3ranks-all-in-all_gather", 3);
    d[2].entries.back().op = "broadcast";
    FrVerdict v = analyze_flight_recorder(d);
    CHECK(v.kind == FrVerdictKind::Mismatch);
    CHECK(v.culprits == std::vector<int>{2});
  }
}

TEST_CASE("when every rank is in the same collective, or none is, nobody is named", "[flight_recorder]") {
  FrVerdict all_in = analyze_flight_recorder(dumps("nccl-3ranks-all-in-all_gather", 3));
  CHECK(all_in.kind == FrVerdictKind::AllInCollective);
  CHECK(all_in.culprits.empty());
  CHECK(all_in.text == "every rank is in all_gather #50 (process group 0) and none has finished it (at train.py:88 in "
                       "train_step)");
  auto d = dumps("nccl-3ranks-all-in-all_gather", 3);
  for (auto& x : d) x.entries.pop_back();
  FrVerdict none_in = analyze_flight_recorder(d);
  CHECK(none_in.kind == FrVerdictKind::NoneInCollective);
  CHECK(none_in.text == "every rank finished all_gather #49 (process group 0), its last collective");
  for (auto& x : d) x.entries.clear();
  CHECK(analyze_flight_recorder(d).kind == FrVerdictKind::NothingRecorded);
  FrVerdict none = analyze_flight_recorder({}, {0, 1});
  CHECK(none.kind == FrVerdictKind::NoDumps);
  CHECK(none.text == "no dump to read; no dump from ranks 0, 1");
}

TEST_CASE("ranks are listed with runs and their nodes", "[flight_recorder]") {
  CHECK(describe_rank_numbers({3}) == "rank 3");
  CHECK(describe_rank_numbers({2, 0, 1, 5}, {{0, "g1"}, {1, "g1"}, {5, "g2"}}) == "ranks 0–2, 5 (g1, g2)");
  CHECK(describe_rank_numbers({0, 1, 3, 4}) == "ranks 0, 1, 3, 4");
}

TEST_CASE("the Flight Recorder names the culprit only where the stacks do not", "[flight_recorder]") {
  FrVerdict fr = analyze_flight_recorder(dumps("gloo-2ranks-rank1-sleeps", 2), {}, {{0, "g1"}, {1, "g2"}});
  CulpritVerdict stacks;
  stacks.kind = CulpritKind::NoStacks;
  auto v = flight_recorder_culprit(stacks, fr, {{0, "g1"}, {1, "g2"}});
  REQUIRE(v);
  CHECK(v->kind == CulpritKind::Named);
  REQUIRE(v->culprits.size() == 1);
  CHECK(v->culprits[0].rank == 1);
  CHECK(v->culprits[0].node == "g2");
  stacks.kind = CulpritKind::Named;
  CHECK_FALSE(flight_recorder_culprit(stacks, fr, {}));
  stacks.kind = CulpritKind::AllInCollective;
  CHECK_FALSE(flight_recorder_culprit(stacks, analyze_flight_recorder(dumps("nccl-3ranks-all-in-all_gather", 3)), {}));
}

// ---- the pipes ----

TEST_CASE("a rank's pipe is asked without ever blocking", "[flight_recorder]") {
  test::TempDir tmp;
  std::string pipe = fr_pipe_path(tmp.path + "/pipe_", 3);
  CHECK(pipe == tmp.path + "/pipe_3.pipe");
  CHECK(ask_dump_pipe(pipe) == PipeAsk::NoPipe);
  REQUIRE(::mkfifo(pipe.c_str(), 0600) == 0);
  CHECK(ask_dump_pipe(pipe) == PipeAsk::NoReader);  // the rank that made it is gone
  int reader = ::open(pipe.c_str(), O_RDONLY | O_NONBLOCK);  // as torch opens it
  REQUIRE(reader >= 0);
  CHECK(ask_dump_pipe(pipe) == PipeAsk::Asked);
  char buf[16];
  CHECK(::read(reader, buf, sizeof buf) == 1);  // what torch's shouldDump() reads
  // Asked again and again, the reader not reading: the pipe fills, the ask never blocks.
  for (int i = 0; i < 70000; i++) REQUIRE(ask_dump_pipe(pipe) == PipeAsk::Asked);
  ::close(reader);
  std::string plain = tmp.path + "/pipe_4.pipe";
  write_file_atomic(plain, "");
  CHECK(ask_dump_pipe(plain) == PipeAsk::NotAPipe);
  CHECK(read_file(plain).empty());  // nothing written to it
}

TEST_CASE("which ranks were asked survives the stacks file", "[flight_recorder]") {
  std::string text = "# stacks of job 42's training processes on g1\n" +
                     fr_asks_section("/l/j.restart0.fr/pipe_", {{0, PipeAsk::Asked, "g1"}, {1, PipeAsk::NoPipe, "g1"}}) +
                     "\n## pid 17 (rank 0), state S: faulthandler (signal 42)\nrank 5: asked\n";
  CHECK(text.find("## flight recorder: dump pipes /l/j.restart0.fr/pipe_N.pipe\nrank 0: asked\nrank 1: no pipe\n") !=
        std::string::npos);
  auto asks = read_fr_asks(text, "g1");
  REQUIRE(asks.size() == 2);  // not the line in a rank's stacks
  CHECK(asks[0].rank == 0);
  CHECK(asks[0].outcome == PipeAsk::Asked);
  CHECK(asks[0].node == "g1");
  CHECK(asks[1].outcome == PipeAsk::NoPipe);
  CHECK(read_fr_asks("# stacks\n(no training process found)\n", "g1").empty());
}

TEST_CASE("the watchdog waits for new, whole dumps, a bounded time", "[flight_recorder]") {
  test::TempDir tmp;
  std::string prefix = tmp.path + "/fr/rank_";
  std::filesystem::create_directories(tmp.path + "/fr");
  std::string old_dump = read_file(data_dir() + "nccl-4ranks-rank2-missing/rank_0", 1 << 24);
  write_file_atomic(fr_dump_path(prefix, 0), old_dump);  // from before the ask
  auto before = existing_dumps(prefix);
  REQUIRE(before.size() == 1);
  FakeClock clock;
  std::string r0 = read_file(data_dir() + "gloo-2ranks-rank1-sleeps/rank_0", 1 << 24);
  std::string r1 = read_file(data_dir() + "gloo-2ranks-rank1-sleeps/rank_1", 1 << 24);
  int polls = 0;
  clock.on_sleep = [&] {
    // Rank 1 writes its dump in place, half first; then rank 0's new one comes.
    if (++polls == 2) write_file_atomic(fr_dump_path(prefix, 1), r1.substr(0, r1.size() / 2));
    if (polls == 4) write_file_atomic(fr_dump_path(prefix, 1), r1);
    if (polls == 6) write_file_atomic(fr_dump_path(prefix, 0), r0);
  };
  FrCollected got = collect_fr_dumps(prefix, {0, 1}, before, clock, kFlightRecorderWait);
  REQUIRE(got.dumps.size() == 2);
  CHECK(got.missing.empty());
  CHECK(got.dumps[0].entries.size() == 7);  // the new one, not the NCCL dump that was there
  CHECK(got.paths == std::vector<std::string>{prefix + "0", prefix + "1"});
  CHECK(polls == 6);

  SECTION("a rank that never dumps: the wait ends at its bound, and it is missing") {
    FakeClock c2;
    double start = c2.monotonic();
    FrCollected g = collect_fr_dumps(prefix, {0, 1, 2}, existing_dumps(prefix), c2, kFlightRecorderWait);
    CHECK(g.dumps.empty());  // 0 and 1 are as they were
    CHECK(g.missing == std::vector<int>{0, 1, 2});
    CHECK(c2.monotonic() - start >= kFlightRecorderWait);
    CHECK(c2.monotonic() - start < kFlightRecorderWait + 1);
  }
  SECTION("a rank whose hook could not dump says why, and is not waited for") {
    FakeClock c4;
    double start = c4.monotonic();
    c4.on_sleep = [&] {
      if (c4.monotonic() - start >= 3) write_file_atomic(fr_dump_path(prefix, 7) + ".error", "RuntimeError: no memory\n");
    };
    FrCollected g = collect_fr_dumps(prefix, {7}, {}, c4, kFlightRecorderWait);
    CHECK(g.missing == std::vector<int>{7});
    CHECK(c4.monotonic() - start < 4);
    REQUIRE(g.problems.size() == 1);
    CHECK(g.problems[0] == "rank 7 could not dump: 'RuntimeError: no memory' (from " + prefix + "7.error)");
  }
  SECTION("a dump that never reads whole is a problem said") {
    FakeClock c3;
    write_file_atomic(fr_dump_path(prefix, 5), "\x80\x02}");
    FrCollected g = collect_fr_dumps(prefix, {5}, {}, c3, 2);
    CHECK(g.missing == std::vector<int>{5});
    REQUIRE(g.problems.size() == 1);
    CHECK(g.problems[0].find("rank 5's dump " + prefix + "5 does not read: ") == 0);
    CHECK(g.problems[0].find("truncated") != std::string::npos);
  }
}
