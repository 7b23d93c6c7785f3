// Hybrid mode's decisions through a scripted Slurm (fake_runner.hpp): who is
// submitted when the group is already won, who is cancelled at once, and
// when a race has failed. The claim itself (mkdir in the script) is
// exercised on the real cluster in tests/slurm/test_race_*.
#include "catch.hpp"
#include <algorithm>
#include <filesystem>

#include "fake_runner.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "workflows/logs.hpp"
#include "workflows/race_again.hpp"
#include "workflows/race_command.hpp"
#include "workflows/race_submit.hpp"
#include "workflows/race_waiting.hpp"
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

namespace {

// A race whose winner may be re-raced once (requeue.max_restarts 1).
struct RequeueFixture : RaceFixture {
  RequeueFixture() {
    req.specs = {test::write_one_shape_spec(
        tmp.path, "race",
        "requeue: {signal: USR1, grace: 60, max_restarts: 1}\n"
        "alternatives:\n  - {nodes: 2, partition: a100-80gb, label: 2x1}\n")};
  }
};

}  // namespace

TEST_CASE("race_again: only a requeued winner opens the next generation, once, bounded by max_restarts") {
  RequeueFixture f;
  RaceSubmission r = f.submit();
  Run run = r.run;
  CHECK(race_again(run, "", f.slurm.ctx, f.out).why_not == "generation 1 has no winner yet");

  f.slurm.job("100")->state = "RUNNING";
  f.slurm.job("101")->state = "CANCELLED";
  fs::create_directory(race_dir(run) + "/claim");
  write_file_atomic(race_dir(run) + "/claim/winner", "100 1x1 1795300010 0\n");
  CHECK(race_again(run, "", f.slurm.ctx, f.out).why_not == "the winner, job 100, is RUNNING");
  CHECK(race_again(run, "101", f.slurm.ctx, f.out).why_not ==
        "job 101 is not the winner of generation 1 (job 100)");

  // Requeued: Slurm shows it waiting again. The other shape is submitted
  // into generation 2, which also holds the requeued job.
  f.slurm.job("100")->state = "PENDING";
  RaceAgain again = race_again(run, "", f.slurm.ctx, f.out);
  REQUIRE(again.opened);
  CHECK(again.generation == 2);
  CHECK(again.why == "job 100 (shape 1x1), the winner of generation 1, requeued (PENDING)");
  CHECK(again.submitted == std::vector<std::string>{"job 102 (shape 2x1)"});
  RaceState race = read_race(run);
  REQUIRE(race.generations.size() == 2);
  CHECK(race.job_of_label() == std::map<std::string, std::string>{{"1x1", "100"}, {"2x1", "102"}});
  CHECK(race.generations[1].why == again.why);
  CHECK_FALSE(race.claimed());

  // Asked again (status on another login node): nothing more is submitted.
  CHECK(race_again(run, "", f.slurm.ctx, f.out).why_not == "generation 2 has no winner yet");
  CHECK(f.slurm.runner.count("sbatch") == 3);

  // Generation 2 won and its winner requeued: max_restarts 1 allows 2 generations.
  fs::create_directory(claim_dir(run, 2));
  write_file_atomic(claim_dir(run, 2) + "/winner", "102 2x1 1795300020 0\n");
  f.slurm.job("102")->state = "PENDING";
  CHECK(race_again(run, "", f.slurm.ctx, f.out).why_not ==
        "the group has had 2 generation(s), requeue.max_restarts (1) allows 2");
  CHECK(f.slurm.runner.count("sbatch") == 3);
}

TEST_CASE("status only reads: a requeued winner is noted with the command that re-races, nothing is submitted") {
  RequeueFixture f;
  Run run = f.submit().run;
  auto notes = [&] { return waiting_act_notes(f.req.runs_root, {}, f.slurm.clock.now(), f.slurm.ctx.slurm); };
  CHECK(notes().empty());  // no winner yet
  f.slurm.job("100")->state = "RUNNING";
  f.slurm.job("101")->state = "CANCELLED";
  test::claim_race(run, "100", "1x1");
  CHECK(notes().empty());  // the winner trains
  f.slurm.job("100")->state = "REQUEUED";
  CHECK(notes().empty());  // its old processes may still run
  f.slurm.job("100")->state = "PENDING";
  std::string note = "run " + run.id + ": the race's winner, job 100, was requeued and waits; `ddpctl race-again " +
                     run.id + "` races the other shapes again (status only reads)";
  CHECK(notes() == std::vector<std::string>{note});
  // By name as well as without targets; a job id is not a run.
  CHECK(waiting_act_notes(f.req.runs_root, {run.id, "100"}, f.slurm.clock.now(), f.slurm.ctx.slurm) ==
        std::vector<std::string>{note});
  CHECK(f.slurm.runner.count("sbatch") == 2);
  CHECK(read_race(run).generations.size() == 1);
  // race-again acts; then nothing waits.
  REQUIRE(race_again_in(f.req.runs_root, {run.id}, f.slurm.clock.now(), f.slurm.ctx, f.out).size() == 1);
  CHECK(f.slurm.runner.count("sbatch") == 3);
  CHECK(notes().empty());
}

TEST_CASE("race_again: the shapes raced again leave out the nodes the requeued winner's job leaves out") {
  RequeueFixture f;
  RaceSubmission r = f.submit();
  Run run = r.run;
  test::claim_race(run, "100", "1x1");
  // The node check (or watchdog.exclude_slow) excluded g2 from job 100 and requeued it.
  f.slurm.job("100")->state = "PENDING";
  f.slurm.job("100")->excluded = "g2";
  RaceAgain again = race_again(run, "", f.slurm.ctx, f.out);
  REQUIRE(again.opened);
  CHECK(again.why == "job 100 (shape 1x1), the winner of generation 1, requeued (PENDING); g2 left out, as job 100 "
                     "leaves it");
  REQUIRE(again.submitted == std::vector<std::string>{"job 102 (shape 2x1)"});
  CHECK(f.slurm.job("102")->excluded == "g2");
  // The ledger holds the sbatch line as it ran.
  Run now = load_run(run.dir);
  const Attempt* a = job_attempt(now, "102");
  REQUIRE(a);
  CHECK(std::find(a->argv.begin(), a->argv.end(), "--exclude=g2") != a->argv.end());
  CHECK(f.out.warnings.empty());
}

TEST_CASE("race_again: a winner requeueing itself names what its requeue will leave out, and why") {
  RequeueFixture f;
  RaceSubmission r = f.submit();
  Run run = r.run;
  f.slurm.job("101")->state = "RUNNING";
  test::claim_race(run, "101", "2x1");
  // Before its requeue Slurm does not show g3 excluded yet: the script names it.
  RaceAgain again = race_again(run, "101", f.slurm.ctx, f.out, {"g3"}, "by the node check: node g3 cannot reach g1");
  REQUIRE(again.opened);
  CHECK(again.why == "job 101 (shape 2x1), the winner of generation 1, requeued itself (by the node check: node g3 "
                     "cannot reach g1); g3 left out, as job 101 leaves it");
  CHECK(f.slurm.job("102")->excluded == "g3");
}

TEST_CASE("race_again: without scontrol's answer the shapes are raced again all the same, and that is said") {
  RequeueFixture f;
  RaceSubmission r = f.submit();
  Run run = r.run;
  test::claim_race(run, "100", "1x1");
  f.slurm.job("100")->state = "PENDING";
  f.slurm.runner.on("scontrol", {"show", "job", "-o"}, test::exits(1, "", "slurm_load_jobs error: Unable to contact slurm controller\n"));
  RaceAgain again = race_again(run, "", f.slurm.ctx, f.out);
  REQUIRE(again.opened);
  CHECK(again.submitted == std::vector<std::string>{"job 102 (shape 2x1)"});
  CHECK(f.slurm.job("102")->excluded.empty());
  REQUIRE(f.out.warnings.size() == 1);
  CHECK_THAT(f.out.warnings[0], Catch::Contains("the nodes job 100 leaves out are not known") &&
                                    Catch::Contains("Unable to contact slurm controller"));
}

TEST_CASE("sbatch_leave_out joins the script's own exclusions and takes named nodes out of its node list") {
  std::vector<std::string> kept;
  CHECK(sbatch_leave_out("#!/bin/bash\n#SBATCH --nodes=2\n", {"g2"}, &kept) == std::vector<std::string>{"--exclude=g2"});
  CHECK(kept.empty());
  CHECK(sbatch_leave_out("#SBATCH --exclude=g[3-4]\n", {"g2", "g3"}) == std::vector<std::string>{"--exclude=g3,g4,g2"});
  CHECK(sbatch_leave_out("#SBATCH --nodelist=g[1-2]\n", {"g2"}, &kept) ==
        std::vector<std::string>{"--exclude=g2", "--nodelist=g1"});
  CHECK(kept.empty());
  // The node list's only node stays: the shape cannot run without it.
  CHECK(sbatch_leave_out("#SBATCH --nodelist=g2\n", {"g2"}, &kept).empty());
  CHECK(kept == std::vector<std::string>{"g2"});
  CHECK(sbatch_leave_out("#SBATCH --exclude=g3\n", {}).size() == 1);
}

TEST_CASE("race_again: the winner requeueing itself opens the next generation without asking Slurm") {
  RequeueFixture f;
  RaceSubmission r = f.submit();
  Run run = r.run;
  f.slurm.job("101")->state = "RUNNING";
  fs::create_directory(race_dir(run) + "/claim");
  write_file_atomic(race_dir(run) + "/claim/winner", "101 2x1 1795300010 0\n");
  RaceAgain again = race_again(run, "101", f.slurm.ctx, f.out);
  REQUIRE(again.opened);
  CHECK(again.why == "job 101 (shape 2x1), the winner of generation 1, requeued itself (time limit)");
  CHECK(again.submitted == std::vector<std::string>{"job 102 (shape 1x1)"});
}

TEST_CASE("race_again: a group without requeue: is never re-raced") {
  RaceFixture f;
  RaceSubmission r = f.submit();
  Run run = r.run;
  f.slurm.job("100")->state = "PENDING";
  fs::create_directory(race_dir(run) + "/claim");
  write_file_atomic(race_dir(run) + "/claim/winner", "100 1x1 1795300010 0\n");
  CHECK(race_again(run, "", f.slurm.ctx, f.out).why_not ==
        "the group has had 1 generation(s), requeue.max_restarts (0) allows 1");
  std::vector<Run> runs = {run};
  CHECK(requeued_winners(runs, f.slurm.ctx.slurm).empty());
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

TEST_CASE("logs -f of a race already re-raced says once which generation's winner it follows") {
  RequeueFixture f;
  RaceSubmission r = f.submit();
  Run run = r.run;
  test::claim_race(run, "100", "1x1");
  f.slurm.job("100")->state = "PENDING";  // requeued: generation 2 races job 100 and 2x1 again
  REQUIRE(race_again(run, "", f.slurm.ctx, f.out).opened);
  fs::create_directory(claim_dir(run, 2));
  write_file_atomic(claim_dir(run, 2) + "/winner", "102 2x1 1795300020 0\n");
  f.slurm.job("102")->state = "COMPLETED";
  LogsRequest req;
  req.run = run.id;
  req.runs_root = f.req.runs_root;
  req.follow = true;
  f.out = {};
  show_logs(req, f.slurm.ctx, f.out);
  std::string line = "==> race " + run.id + ": generation 2 won by shape 2x1 (job 102); following it <==";
  CHECK(std::count(f.out.lines.begin(), f.out.lines.end(), line) == 1);
}

TEST_CASE("logs -f only reads: a requeued winner nobody re-raced is noted once, and nothing is submitted") {
  RequeueFixture f;
  Run run = f.submit().run;
  test::claim_race(run, "100", "1x1");
  f.slurm.job("101")->state = "CANCELLED";
  f.slurm.job("100")->state = "PENDING";  // requeued, waiting
  int polls = 0;
  f.slurm.clock.on_sleep = [&] {
    if (++polls == 5) f.slurm.job("100")->state = "COMPLETED";  // it started again by itself and ended
  };
  LogsRequest req;
  req.run = run.id;
  req.runs_root = f.req.runs_root;
  req.follow = true;
  show_logs(req, f.slurm.ctx, f.out);
  std::string note = "==> job 100 was requeued and waits; `ddpctl race-again " + run.id +
                     "` races the other shapes again (logs only reads) <==";
  CHECK(polls >= 5);
  CHECK(std::count(f.out.lines.begin(), f.out.lines.end(), note) == 1);
  CHECK(f.slurm.runner.count("sbatch") == 2);
  CHECK(read_race(load_run(run.dir)).generations.size() == 1);
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
