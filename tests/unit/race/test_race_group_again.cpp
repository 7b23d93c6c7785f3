// Racing again (race_again.cpp): a race whose winner was requeued opens its
// next generation, once, bounded by requeue.max_restarts, the shapes raced
// again leaving out the nodes the winner's job leaves out; status and logs -f
// only reads, noting a requeued winner with the command that re-races
// (logs -f: tests/unit/logs/test_logs_race.cpp).
#include "catch.hpp"
#include <algorithm>
#include <filesystem>

#include "fake_runner.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "race/race_again.hpp"
#include "race/race_submit.hpp"
#include "race/race_waiting.hpp"
#include "fixtures.hpp"

using namespace ddpctl;
using test::FakeSlurm;
namespace fs = std::filesystem;

using test::RaceAgainFixture;
using test::RequeueFixture;

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
  RaceAgainFixture f;
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
