// Race groups: reading `sbatch --test-only`, ranking shapes by estimated
// start, keeping the ranking, and runs made of several specs.
#include "catch.hpp"
#include <filesystem>

#include "base/files.hpp"
#include "helpers.hpp"
#include "explain/race.hpp"
#include "runs/run_store.hpp"
#include "slurm/slurm_parse_replies.hpp"
#include "base/text.hpp"

using namespace ddpctl;
namespace fs = std::filesystem;

namespace {
CommandResult test_only(int code, std::string err) {
  CommandResult r;
  r.argv = {"env", "SLURM_TIME_FORMAT=%s", "sbatch", "--test-only"};
  r.exit_code = code;
  r.err = std::move(err);
  return r;
}

RankedShape starts(const std::string& label, long long at) {
  RankedShape r;
  r.label = label;
  r.estimate.kind = StartEstimate::Kind::Starts;
  r.estimate.start = at;
  r.estimate.nodes = "g1";
  r.estimate.partition = "cpu";
  return r;
}

using test::TempDir;
}  // namespace

// Slurm 22.05's own words on the local cluster, epoch time from SLURM_TIME_FORMAT=%s.
TEST_CASE("test-only: a start estimate is read with its nodes and partition") {
  auto e = parse_test_only(
      test_only(0, "sbatch: Job 1 to start at 1795349879 using 4 processors on nodes a[1-2] in partition a100-80gb\n"));
  REQUIRE(e.kind == StartEstimate::Kind::Starts);
  CHECK(e.start == 1795349879);
  CHECK(e.processors == 4);
  CHECK(e.nodes == "a[1-2]");
  CHECK(e.partition == "a100-80gb");
}

TEST_CASE("test-only: an ISO local start time is read too (a user's SLURM_TIME_FORMAT is overridden, but not everywhere)") {
  auto e = parse_test_only(test_only(0, "sbatch: Job 4 to start at 2026-11-22T12:17:59 using 1 processors on nodes g1 in partition cpu\n"));
  REQUIRE(e.kind == StartEstimate::Kind::Starts);
  std::tm tm{};
  tm.tm_year = 126, tm.tm_mon = 10, tm.tm_mday = 22, tm.tm_hour = 12, tm.tm_min = 17, tm.tm_sec = 59, tm.tm_isdst = -1;
  CHECK(e.start == std::mktime(&tm));
}

// 25.05 and later put a stray word, or a cluster, between the time and
// "using" (26.05.5 on the local cluster, with and without SLURM_TIME_FORMAT).
TEST_CASE("test-only: Slurm 26.05's words between the time and 'using' are read past") {
  auto e = parse_test_only(
      test_only(0, "sbatch: Job 47 to start at 1795481304 a using 1 processors on nodes a1 in partition a100-80gb\n"));
  REQUIRE(e.kind == StartEstimate::Kind::Starts);
  CHECK(e.start == 1795481304);
  CHECK(e.processors == 1);
  CHECK(e.nodes == "a1");
  CHECK(e.partition == "a100-80gb");
  e = parse_test_only(test_only(0, "sbatch: Job 5 to start at 2026-11-24T19:04:26 a using 2 processors on nodes a[1-2] in partition a100-80gb\n"));
  REQUIRE(e.kind == StartEstimate::Kind::Starts);
  CHECK(e.nodes == "a[1-2]");
  e = parse_test_only(test_only(0, "sbatch: Job 9 to start at 1795481304 on cluster west a using 8 processors on nodes g[1-2] in partition gpu\n"));
  REQUIRE(e.kind == StartEstimate::Kind::Starts);
  CHECK(e.processors == 8);
  CHECK(e.nodes == "g[1-2]");
  CHECK(e.partition == "gpu");
}

TEST_CASE("test-only: a line that names no time readable keeps Slurm's words in the reason") {
  auto e = parse_test_only(test_only(0, "sbatch: Job 47 to start at soon using 1 processors on nodes a1\n"));
  CHECK(e.kind == StartEstimate::Kind::Unknown);
  CHECK_THAT(e.reason, Catch::Contains("Job 47 to start at soon using 1 processors"));
}

TEST_CASE("test-only: an impossible shape carries Slurm's reason") {
  auto e = parse_test_only(test_only(1, "allocation failure: Requested node configuration is not available\n"));
  CHECK(e.kind == StartEstimate::Kind::Impossible);
  CHECK(e.reason == "Requested node configuration is not available");
  e = parse_test_only(test_only(1, "sbatch: error: Batch job submission failed: Invalid feature specification\n"));
  CHECK(e.kind == StartEstimate::Kind::Impossible);
  CHECK(e.reason == "Invalid feature specification");
}

TEST_CASE("test-only: a controller that does not answer is no estimate, never impossible") {
  auto e = parse_test_only(test_only(1, "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)\n"));
  CHECK(e.kind == StartEstimate::Kind::Unknown);
  CommandResult hung = test_only(-1, "");
  hung.timed_out = true;
  CHECK(parse_test_only(hung).kind == StartEstimate::Kind::Unknown);
  CommandResult missing = test_only(127, "env: 'sbatch': No such file or directory\n");
  missing.not_found = true;
  CHECK(parse_test_only(missing).kind == StartEstimate::Kind::Unknown);
  auto garbage = parse_test_only(test_only(0, "something else\n"));
  CHECK(garbage.kind == StartEstimate::Kind::Unknown);
  CHECK_THAT(garbage.reason, Catch::Contains("without an estimate"));
}

TEST_CASE("ranking: earliest start first, ties keep the spec's order, then no estimate, then dropped") {
  RankedShape unknown;
  unknown.label = "u";
  unknown.estimate.reason = "timed out";
  RankedShape dropped;
  dropped.label = "d";
  dropped.dropped = true;
  dropped.why_dropped = "Slurm says: Requested node configuration is not available";
  auto ranked = rank_shapes({dropped, starts("late", 200), unknown, starts("first", 100), starts("tie", 100)});
  std::vector<std::string> labels;
  for (const auto& r : ranked) labels.push_back(r.label);
  CHECK(labels == std::vector<std::string>{"first", "tie", "late", "u", "d"});

  auto lines = format_ranking(ranked, 100);
  REQUIRE(lines.size() == 6);
  CHECK(lines[0].rfind("RANK  SHAPE", 0) == 0);
  CHECK_THAT(lines[1], Catch::StartsWith("1     first") && Catch::Contains("now") && Catch::Contains("g1"));
  CHECK_THAT(lines[3], Catch::StartsWith("3     late") && Catch::Contains("in 1m40s"));
  CHECK_THAT(lines[4], Catch::StartsWith("4     u") && Catch::Contains("unknown") && Catch::EndsWith("timed out"));
  CHECK_THAT(lines[5], Catch::StartsWith("-     d") && Catch::Contains("never (dropped)") &&
                           Catch::EndsWith("Slurm says: Requested node configuration is not available"));
}

TEST_CASE("columns are aligned, the last one unpadded") {
  auto lines = format_columns({{"A", "BB", "C"}, {"long", "x", ""}});
  CHECK(lines == std::vector<std::string>{"A     BB  C", "long  x"});
}

TEST_CASE("a race of two specs keeps each shape's spec and output folder, and the ranking") {
  TempDir t;
  const std::string file_a = test::source_dir() + "/configs/gilbreth-a100-1x4.yaml";
  const std::string file_b = test::source_dir() + "/configs/gilbreth-a100-4x1.yaml";
  Run run = test::make_run(t.path, {{file_a, "name: a\n", ""}, {file_b, "name: b\n", "elsewhere"}}, {}, "h", {});
  CHECK(read_file(run.dir + "/spec.yaml") == "name: a\n");
  CHECK(read_file(run.dir + "/spec.2.yaml") == "name: b\n");
  Run back = load_run(run.dir);
  REQUIRE(back.shapes.size() == 2);
  CHECK(back.shapes[0].spec_file == fs::absolute(file_a).string());
  CHECK(back.shapes[1].spec_file == fs::absolute(file_b).string());
  CHECK(back.shapes[1].output_dir == fs::absolute("elsewhere").string());
  CHECK(back.shapes[0].output_dir == back.output_dir);

  init_race(run);
  RankedShape gone;
  gone.label = back.shapes[1].label;
  gone.dropped = true;
  gone.why_dropped = "Slurm says: no";
  record_ranking(run, {starts(back.shapes[0].label, 5), gone});
  RaceState race = read_race(run);
  REQUIRE(race.ranking.size() == 2);
  CHECK(race.ranking[0].estimate.kind == StartEstimate::Kind::Starts);
  CHECK(race.ranking[0].estimate.start == 5);
  CHECK(race.ranking[1].dropped);
  CHECK(race.ranking[1].why_dropped == "Slurm says: no");
}

namespace {

RankedShape timed(const std::string& label, long long start, double run_time) {
  RankedShape r = starts(label, start);
  r.run_time_s = run_time;
  r.run_time_from = "measured";
  return r;
}

}  // namespace

TEST_CASE("ranking by finish: start + run time, and a shape that cannot finish first even starting now is dropped") {
  // now = 1000. 8x1 starts in 2000 s and runs 1000 s: finishes at 4000, first.
  // 1x4 starts in 600 s and runs 3000 s: finishes at 4600; started now it
  // would finish at 4000, no later than 8x1, so it stays (an estimate may be
  // pessimistic). 4x1 (3500 s) and 2x2 (4000 s) could not finish by 4000
  // even if they started now: dropped.
  std::string note;
  auto ranked = rank_by_finish({timed("1x4", 1600, 3000), timed("4x1", 900, 3500), timed("2x2", 1000, 4000),
                                timed("8x1", 3000, 1000)},
                               1000, note);
  CHECK(note.empty());
  std::vector<std::string> labels;
  for (const auto& r : ranked) labels.push_back(r.label);
  CHECK(labels == std::vector<std::string>{"8x1", "1x4", "4x1", "2x2"});
  CHECK(*ranked[0].finish == 4000);
  CHECK(*ranked[1].finish == 4600);
  CHECK_FALSE(ranked[1].dropped);
  CHECK(ranked[2].dropped);
  CHECK(ranked[2].why_dropped ==
        "even starting now it would finish in 58m20s (58m20s run time), after shape 8x1's predicted finish in 50m00s");
  CHECK(ranked[3].dropped);
  CHECK(ranked[3].why_dropped ==
        "even starting now it would finish in 1h06m (1h06m run time), after shape 8x1's predicted finish in 50m00s");

  auto lines = format_ranking(ranked, 1000);
  CHECK_THAT(lines[0], Catch::Contains("RUN TIME") && Catch::Contains("PREDICTED FINISH"));
  CHECK_THAT(lines[2], Catch::StartsWith("2     1x4") && Catch::Contains("50m00s (measured)") && Catch::Contains("in 1h00m"));
  CHECK_THAT(lines[3], Catch::StartsWith("-     4x1") && Catch::Contains("dropped"));
}

TEST_CASE("ranking by finish without a run time for every shape falls back to start, and says why") {
  RankedShape bare = starts("bare", 100);
  std::string note;
  auto ranked = rank_by_finish({timed("late", 500, 10), bare}, 0, note);
  CHECK(note == "no predicted run time for shape bare: ranked by estimated start");
  CHECK(ranked[0].label == "bare");
  CHECK_FALSE(ranked[1].dropped);
}

TEST_CASE("a re-raced group: generations, their claims and jobs, and the current winner") {
  TempDir t;
  Run run = test::make_run(t.path, {{test::source_dir() + "/configs/gilbreth-a100-hybrid.yaml", "name: a\n", ""}}, {},
                           "h", {});
  init_race(run);
  record_race_job(run, "1x4", "11");
  record_race_job(run, "4x1", "12");
  fs::create_directories(run.dir + "/race/claim");
  write_file_atomic(run.dir + "/race/claim/winner", "11 1x4 1000.5 0\n");
  // Generation 2, opened after job 11 was requeued; job 13 (4x1) won it.
  fs::create_directories(run.dir + "/race/gen.2/jobs");
  write_file_atomic(run.dir + "/race/gen.2/why", "2000.25 job 11 (shape 1x4), the winner of generation 1, requeued\n");
  record_race_job(run, "1x4", "11", 2);
  record_race_job(run, "4x1", "13", 2);
  CHECK(read_file(run.dir + "/race/gen.2/jobs/4x1") == "13\n");
  fs::create_directories(claim_dir(run, 2));
  write_file_atomic(claim_dir(run, 2) + "/winner", "13 4x1 2001 0\n");

  RaceState race = read_race(run);
  REQUIRE(race.generations.size() == 2);
  CHECK(race.generations[0].winner->job_id == "11");
  CHECK(race.generations[0].winner->attempt == 0);
  CHECK(race.generations[1].why == "job 11 (shape 1x4), the winner of generation 1, requeued");
  CHECK(race.generations[1].opened_at == Approx(2000.25));
  CHECK(race.winner()->job_id == "13");
  CHECK(race.job_of_label() == std::map<std::string, std::string>{{"1x4", "11"}, {"4x1", "13"}});
  CHECK(generation_won_by(race, "11")->number == 1);
  CHECK(generation_won_by(race, "12") == nullptr);
}
