// Hybrid mode's decisions through a scripted Slurm (fake_runner.hpp): who is
// submitted when the group is already won, who is cancelled at once, and
// when a race has failed. The claim itself (mkdir in the script) is
// exercised on the real cluster in tests/slurm/test_race_*; racing again
// after a requeued winner: test_race_group_again.cpp.
#include "catch.hpp"
#include <filesystem>

#include "fake_runner.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "race/race_command.hpp"
#include "race/race_submit.hpp"
#include "fixtures.hpp"

using namespace ddpctl;
using test::FakeSlurm;
namespace fs = std::filesystem;

namespace {

struct RaceFixture {
  test::TempDir tmp;
  FakeSlurm slurm;
  RaceRequest req;
  test::RecordingOutput out;
  RaceFixture() {
    req.specs = {test::write_race_spec(tmp.path)};
    req.runs_root = tmp.path + "/runs";
    req.templates_dir = test::source_dir() + "/templates";
  }
  RaceSubmission submit() { return submit_race(load_race_group(req.specs, req.sets), req, slurm.ctx, out); }
  Run only_run() {
    auto runs = list_runs(req.runs_root);
    REQUIRE(runs.size() == 1);
    return runs[0];
  }
};


}  // namespace

TEST_CASE("a race submits every shape and records each job id for the winner to cancel") {
  RaceFixture f;
  RaceSubmission r = f.submit();
  REQUIRE(r.kind == RaceSubmission::Kind::Submitted);
  CHECK(r.submitted == std::vector<std::string>{"job 100 (shape 1x1)", "job 101 (shape 2x1)"});
  RaceState race = read_race(r.run);
  CHECK(race.job_of_label() == std::map<std::string, std::string>{{"1x1", "100"}, {"2x1", "101"}});
  CHECK_FALSE(race.claimed());
  SECTION("submitting the same race again makes no second group") {
    RaceSubmission again = f.submit();
    CHECK(again.kind == RaceSubmission::Kind::AlreadySubmitted);
    CHECK(f.slurm.runner.count("sbatch") == 2);
  }
}

TEST_CASE("a shape not yet submitted when the group is won is not submitted") {
  RaceFixture f;
  f.slurm.on_submit = [&](FakeSlurm::FakeJob& job) {
    if (job.id == "100") test::claim_race(f.only_run(), "100", "1x1");  // the first job starts and wins at once
  };
  RaceSubmission r = f.submit();
  CHECK(r.submitted == std::vector<std::string>{"job 100 (shape 1x1)"});
  CHECK(f.out.lines == std::vector<std::string>{"shape 2x1: not submitted; the group was already won by job 100"});
  CHECK(f.slurm.runner.count("sbatch") == 1);
}

TEST_CASE("a job submitted as the group is claimed, before its id was recorded, is cancelled at once") {
  RaceFixture f;
  // Job 100 wins while sbatch of the second shape is still running: its
  // script cannot cancel job 101, whose id is not recorded yet.
  f.slurm.on_submit = [&](FakeSlurm::FakeJob& job) {
    if (job.id == "101") test::claim_race(f.only_run(), "100", "1x1");
  };
  RaceSubmission r = f.submit();
  CHECK(r.submitted.size() == 2);
  CHECK(f.slurm.job("101")->state == "CANCELLED");
  CHECK(f.slurm.job("100")->state == "PENDING");
  CHECK(f.out.lines == std::vector<std::string>{"shape 2x1: job 101 cancelled at once; the group was already won"});
}

TEST_CASE("a shape sbatch rejects is reported and the race goes on, none submitted is an error") {
  RaceFixture f;
  f.slurm.sbatch = FakeSlurm::Sbatch::Rejects;
  std::string error = test::user_error_of([&] { f.submit(); });
  CHECK_THAT(error, Catch::Contains("no shape of the race could be submitted"));
  REQUIRE(f.out.errors.size() == 2);
  CHECK_THAT(f.out.errors[0], Catch::StartsWith("shape 1x1: sbatch rejected the job: Invalid account"));
}

TEST_CASE("the race outcome: won, racing while a claim is being written, failed when all ended unclaimed") {
  RaceState race;
  race.is_race = true;
  race.generations.emplace_back();
  race.generations.back().job_of_label = {{"a", "1"}, {"b", "2"}};
  JobStates states;
  Job ended;
  ended.state = JobState::Failed;
  states.jobs["1"] = ended;
  Job pending;
  pending.state = JobState::Pending;
  states.jobs["2"] = pending;
  CHECK(race_outcome(race, states) == RaceOutcome::Racing);
  states.jobs["2"] = ended;
  CHECK(race_outcome(race, states) == RaceOutcome::Failed);
  race.generations.back().claimed = true;  // the winner file is not written yet
  CHECK(race_outcome(race, states) == RaceOutcome::Racing);
  race.generations.back().winner = RaceEvent{"1", "a", 5};
  CHECK(race_outcome(race, states) == RaceOutcome::Won);
  CHECK(race_outcome(RaceState{}, JobStates{}) == RaceOutcome::Racing);  // no job recorded yet
}

TEST_CASE("wait_for_race says who won and who stands down") {
  RaceFixture f;
  RaceSubmission r = f.submit();
  f.slurm.clock.on_sleep = [&] {
    f.slurm.job("101")->state = "RUNNING";
    test::claim_race(r.run, "101", "2x1");
  };
  wait_for_race(f.slurm.ctx, r.run, false, f.out);
  REQUIRE(f.out.lines.size() == 2);
  CHECK_THAT(f.out.lines[0], Catch::StartsWith("race: won by shape 2x1 (job 101)"));
  CHECK(f.out.lines[1] == "race: shape 1x1 (job 100) stands down");
}

TEST_CASE("wait_for_race fails when every job ended without claiming the group") {
  RaceFixture f;
  RaceSubmission r = f.submit();
  for (auto& j : f.slurm.jobs) j.state = "FAILED";
  CHECK_THAT(test::user_error_of([&] { wait_for_race(f.slurm.ctx, r.run, false, f.out); }),
             Catch::Contains("race failed: every shape's job ended before claiming the group"));
}

TEST_CASE("specs racing together get unique labels and one identity") {
  test::TempDir tmp;
  std::string a = test::write_one_shape_spec(tmp.path, "a");
  std::string b = test::write_one_shape_spec(tmp.path, "b");
  RaceGroup g = load_race_group({a, b}, {});
  CHECK(g.labels() == std::vector<std::string>{"a-1x1", "b-1x1"});
  CHECK(g.identity == load_race_group({a, b}, {}).identity);
  CHECK(g.identity != load_race_group({b, a}, {}).identity);
  CHECK_THAT(test::user_error_of([&] { load_race_group({a, a}, {}); }), Catch::Contains("given twice"));
  CHECK_THAT(test::user_error_of([&] { load_race_group({a}, {}); }), Catch::Contains("at least two shapes"));
}

TEST_CASE("a shape the site's limits never let start is dropped from the race with the limit named") {
  RaceFixture f;
  // The a100-80gb partition takes one node per job: the 2x1 shape would pend for ever.
  auto partitions = [&](const std::string& a100_max_nodes) {
    f.slurm.runner.on("scontrol", {"show", "partition"},
                      test::exits(0, "PartitionName=a100-80gb AllowAccounts=ALL AllowQos=ALL Default=NO QoS=N/A "
                                     "MaxNodes=" + a100_max_nodes + " MaxTime=02:00:00 Nodes=a[1-2]\n"
                                     "PartitionName=cpu AllowAccounts=ALL AllowQos=ALL Default=YES QoS=N/A "
                                     "MaxNodes=UNLIMITED MaxTime=02:00:00 Nodes=g[1-4]\n"));
  };
  SECTION("one shape left: it is submitted, the other named") {
    partitions("1");
    RaceSubmission r = f.submit();
    CHECK(r.submitted == std::vector<std::string>{"job 100 (shape 1x1)"});
    REQUIRE(f.out.warnings.size() == 1);
    CHECK_THAT(f.out.warnings[0], Catch::Contains("dropped from the race, it would never start: shape 2x1:") &&
                                      Catch::Contains("2 nodes asked; partition a100-80gb allows 1 node per job (MaxNodes)"));
  }
  SECTION("no shape left: refused, nothing submitted") {
    f.slurm.runner.on("scontrol", {"show", "partition"},
                      test::exits(0, "PartitionName=a100-80gb MaxNodes=1 MaxTime=00:01:00 Nodes=a[1-2]\n"
                                     "PartitionName=cpu Default=YES MaxTime=00:01:00 Nodes=g[1-4]\n"));
    CHECK_THAT(test::user_error_of([&] { f.submit(); }), Catch::Contains("no shape of the race can ever start here"));
    CHECK(f.slurm.runner.count("sbatch") == 0);
  }
}

TEST_CASE("the race's preflight drops the shapes the site's limits never let start, and submits nothing") {
  RaceFixture f;
  f.slurm.runner.on("scontrol", {"show", "partition"},
                    test::exits(0, "PartitionName=a100-80gb AllowAccounts=ALL AllowQos=ALL Default=NO QoS=N/A "
                                   "MaxNodes=1 MaxTime=02:00:00 Nodes=a[1-2]\n"
                                   "PartitionName=cpu AllowAccounts=ALL AllowQos=ALL Default=YES QoS=N/A "
                                   "MaxNodes=UNLIMITED MaxTime=02:00:00 Nodes=g[1-4]\n"));
  RaceGroup group = load_race_group(f.req.specs, f.req.sets);
  CHECK(preflight_race(group, f.slurm.ctx.slurm, f.out) == std::vector<std::string>{"2x1"});
  REQUIRE(f.out.warnings.size() == 1);
  CHECK_THAT(f.out.warnings[0], Catch::StartsWith("dropped from the race, it would never start: shape 2x1:"));
  CHECK(f.slurm.runner.count("sbatch") == 0);
  CHECK_FALSE(fs::exists(f.req.runs_root));
}
