// A requeue after a preemption explained (docs/running.md "When the site
// takes the nodes back"): who took the nodes (from accounting: the job of
// another partition that started on them first), how long the attempt ran,
// and, for the bundled trainer, the step it resumed from and the steps lost.
#include "catch.hpp"

#include <ctime>
#include <fmt/format.h>

#include "explain/report.hpp"
#include "explain/requeue.hpp"
#include "fake_runner.hpp"
#include "helpers.hpp"
#include "explain/status_extras.hpp"

using namespace ddpctl;

namespace {

std::string local_time(long long t) {
  char buf[32];
  std::time_t s = static_cast<std::time_t>(t);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", std::localtime(&s));
  return buf;
}

// One row of sacct -P in ddpctl's format (slurm.cpp kSacctFormat).
std::string sacct_row(const std::string& id, const std::string& partition, long long start, long long end) {
  return fmt::format("{0}|job||RUNNING|None|{1}|acct|g[1-2]|{2}|{2}|{3}|60|2|cpu=2|cpu=2|0:0|/w|{0}\n", id, partition,
                     local_time(start), end > 0 ? local_time(end) : std::string("Unknown"));
}

Job attempt_of(long long start, long long end) {
  Job j;
  j.id = "40";
  j.state = JobState::Preempted;
  j.partition = "scavenger";
  j.nodes = "g[1-2]";
  j.start_time = start;
  j.end_time = end;
  return j;
}

}  // namespace

TEST_CASE("a preemption says who took the nodes, after how long, and the bundled trainer's steps lost") {
  test::TempDir dir;
  RunShape shape;
  shape.label = "2x1";
  shape.job_name = "job";
  shape.output_dir = dir.path;
  shape.max_requeues = 2;
  Job job;
  job.id = "40";
  job.state = JobState::Running;
  job.requeues = 1;
  test::write(dir.path + "/job_40.err",
              "ddpctl: job 40 (x) attempt 1 on g[1-2]\n"
              "ddpctl: requeueing job 40 (restart 1 of 2): after preemption: Slurm's SIGTERM stopped the training "
              "step, which checkpointed (partition scavenger is preemptible)\n"
              "ddpctl: job 40 (x) attempt 2 on g[3-4]\n");
  test::write(dir.path + "/job_40.restart0.0.out",
              "ddp-train: stop requested: checkpoint saved at epoch 1, step 20; exiting for requeue\n"
              "ddp-train: stopped at global step 120\n");
  test::write(dir.path + "/job_40.restart1.0.out",
              "ddp-train: resumed from ck/checkpoint.pt at epoch 1, sample 640 of 6400 (written by 2 ranks, now 2)\n"
              "ddp-train: schedule: global step 120, lr 0.1 (StepLR x0.1 every 30 epochs)\n");
  std::vector<Job> asked;
  auto r = find_requeue(
      shape, job, [] { return std::vector<Job>{attempt_of(1795300000, 1795300123)}; },
      [&](const Job& a) {
        asked.push_back(a);
        return std::string("job 77 (partition urgent)");
      });
  REQUIRE(r);
  CHECK(r->describe() ==
        "attempt 2 of 3 (requeued after preemption: Slurm's SIGTERM stopped the training step, which checkpointed "
        "(partition scavenger is preemptible); preempted by job 77 (partition urgent) after 2m03s; resumed from "
        "global step 120 (no step lost))");
  REQUIRE(asked.size() == 1);
  CHECK(asked[0].nodes == "g[1-2]");  // the preempted attempt, not the current one

  SECTION("a checkpoint older than the stop: the steps between are lost") {
    test::write(dir.path + "/job_40.restart0.0.out", "ddp-train: stopped at global step 125\n");
    CHECK(resumed_steps(dir.path + "/job_40", 1) == "resumed from global step 120 (5 steps lost)");
  }
  SECTION("a program that is not the bundled trainer: who and how long only") {
    test::write(dir.path + "/job_40.restart1.0.out", "training\n");
    auto plain = find_requeue(
        shape, job, [] { return std::vector<Job>{attempt_of(1795300000, 1795307380)}; },
        [](const Job&) { return std::string(); });
    REQUIRE(plain);
    CHECK_THAT(plain->describe(), Catch::Matchers::EndsWith("; preempted after 2h03m)"));
  }
}

TEST_CASE("the preemptor is the job of another partition that started first on the nodes, once they were free") {
  test::FakeRunner runner;
  SlurmClient slurm(runner);
  JobStates states;
  StatusExtras extras(slurm, states);
  const long long end = 1795300123;
  runner.on("sacct", {"--nodelist=g[1-2]"},
            test::exits(0, sacct_row("40", "scavenger", end - 123, end) +      // the preempted attempt itself
                               sacct_row("39", "scavenger", end - 900, end - 300) +  // ran on them before
                               sacct_row("38", "urgent", end - 124, end - 2) +       // came and went just before its end
                               sacct_row("37", "urgent", end - 3, end - 1) +
                               sacct_row("78", "urgent", end + 40, 0) +              // started later
                               sacct_row("77", "urgent", end + 2, 0) +               // the first: the preemptor
                               sacct_row("41", "scavenger", end + 1, 0)));           // its own partition: not it
  CHECK(extras.preemptor(attempt_of(end - 123, end)) == "job 77 (partition urgent)");
  REQUIRE(runner.count("sacct") == 1);
  const auto& argv = runner.calls.back();
  CHECK(std::find(argv.begin(), argv.end(), "--starttime=" + local_time(end - 5)) != argv.end());
  CHECK(std::find(argv.begin(), argv.end(), "--endtime=" + local_time(end + 600)) != argv.end());

  SECTION("accounting names nobody: nothing said") {
    test::FakeRunner quiet;
    SlurmClient s2(quiet);
    StatusExtras e2(s2, states);
    quiet.on("sacct", {}, test::exits(0, ""));
    CHECK(e2.preemptor(attempt_of(end - 123, end)).empty());
    Job unknown = attempt_of(end - 123, end);
    unknown.end_time.reset();
    CHECK(e2.preemptor(unknown).empty());
    CHECK(quiet.count("sacct") == 1);  // no end: not asked
  }
}

TEST_CASE("a run stays one run across its requeues: report counts them, the preemptions and the time to each start") {
  test::TempDir dir;
  RunShape shape;
  shape.label = "2x1";
  shape.job_name = "job";
  shape.output_dir = dir.path;
  Job latest;
  latest.id = "40";
  latest.state = JobState::Completed;
  latest.requeues = 2;
  latest.start_time = 1795300400;
  test::write(dir.path + "/job_40.err",
              "ddpctl: job 40 (x) attempt 1 on g[1-2]\n"
              "ddpctl: requeueing job 40 (restart 1 of 2): after preemption: Slurm's SIGTERM stopped the training "
              "step, which checkpointed (partition scavenger is preemptible)\n"
              "ddpctl: job 40 (x) attempt 2 on g[3-4]\n"
              "ddpctl: requeueing job 40 (restart 2 of 2)\n"
              "ddpctl: job 40 (x) attempt 3 on g[1-2]\n");
  test::write(dir.path + "/job_40.restart0.0.out", "ddp-train: stopped at global step 120\n");
  test::write(dir.path + "/job_40.restart1.0.out",
              "ddp-train: schedule: global step 120, lr 0.1\nddp-train: stopped at global step 300\n");
  test::write(dir.path + "/job_40.restart2.0.out", "ddp-train: schedule: global step 299, lr 0.1\n");
  Job first = attempt_of(1795300000, 1795300123);
  Job second = attempt_of(1795300190, 1795300350);
  second.state = JobState::Requeued;
  RequeueHistory h = requeue_history(shape, latest, {first, second});
  REQUIRE(h.requeues.size() == 2);
  CHECK(h.preemptions == 1);
  CHECK(h.lost_s == Approx(67 + 50));
  CHECK(h.requeues[0] ==
        "attempt 2: after preemption: Slurm's SIGTERM stopped the training step, which checkpointed (partition "
        "scavenger is preemptible); 1m07s from its stop to the next start; resumed from global step 120 (no step lost)");
  CHECK(h.requeues[1] == "attempt 3: at the time limit; 50s from its stop to the next start; resumed from global step "
                         "299 (1 step lost)");

  SECTION("what Slurm did alone (no line of the script): from how sacct says the attempt ended") {
    test::write(dir.path + "/job_40.err", "");
    RequeueHistory slurm_only = requeue_history(shape, latest, {first, second});
    CHECK(slurm_only.preemptions == 1);
    CHECK_THAT(slurm_only.requeues[0], Catch::Matchers::StartsWith("attempt 2: after preemption; 1m07s"));
    CHECK_THAT(slurm_only.requeues[1], Catch::Matchers::StartsWith("attempt 3: by scontrol requeue; 50s"));
  }
}

TEST_CASE("a race by predicted finish counts the preemptions earlier runs met on preemptible capacity") {
  auto row = [](const std::string& partition, double wall_s, int preemptions, std::vector<std::string> requeues,
                double ran_s, double lost_s) {
    ReportRow r;
    r.partition = partition;
    r.wall_s = wall_s;
    r.preemptions = preemptions;
    r.requeues = std::move(requeues);
    r.requeue_ran_s = ran_s;
    r.requeue_lost_s = lost_s;
    return r;
  };
  // Two runs on scavenger: 3 preemptions in 2 h of running, 12 minutes from
  // each stop to the next start; one run on gpu, never preempted.
  std::vector<ReportRow> rows = {row("scavenger", 1800, 2, {"attempt 2", "attempt 3"}, 1800, 1440),
                                 row("scavenger", 2400, 1, {"attempt 2"}, 1200, 720), row("gpu", 3600, 0, {}, 0, 0)};
  std::map<std::string, PreemptionSeen> seen = preemption_seen(rows);
  REQUIRE(seen.count("scavenger"));
  CHECK(seen["scavenger"].runs == 2);
  CHECK(seen["scavenger"].preemptions == 3);
  CHECK(seen["scavenger"].ran_s == Approx(7200));
  std::string note;
  // A 1 h run expects 1.5 preemptions there, 12 minutes each: +18 minutes.
  CHECK(expected_preemption_s(&seen["scavenger"], "scavenger", 3600, note) == Approx(1080));
  CHECK(note == "preemptible: +18m00s for 1.5 expected preemption(s) at 12m00s each, seen in 2 earlier run(s) on "
                "scavenger");
  CHECK(expected_preemption_s(&seen["gpu"], "gpu", 3600, note) == 0);
  CHECK(note == "preemptible: no preemption in 1h00m of 1 earlier run(s) on gpu");
  CHECK(expected_preemption_s(nullptr, "urgent", 3600, note) == 0);
  CHECK(note == "preemptible: no earlier run on urgent to expect preemptions from, counted as none");
}
