// cancel (cancel.cpp): ask first, record the request, scancel, and confirm
// each job ended, within a time limit, through a scripted Slurm.
#include "catch.hpp"

#include "submit/cancel.hpp"
#include "fake_runner.hpp"
#include "helpers.hpp"
#include "fixtures.hpp"
#include "submit/submit.hpp"

using namespace ddpctl;
using test::FakeSlurm;

namespace {

struct CancelFixture : test::SubmitFixture {
  CancelRequest cancel;
  Run run;
  CancelFixture() {
    run = submit().run;
    cancel.runs_root = req.runs_root;
    cancel.targets = {run.id};
  }
};

}  // namespace

TEST_CASE("cancel records the request, then confirms the job ended") {
  CancelFixture f;
  f.slurm.jobs[0].state = "RUNNING";
  cancel_jobs(f.cancel, f.slurm.ctx, f.out);
  CHECK(f.out.lines == std::vector<std::string>{"job 100: CANCELLED"});
  CHECK_FALSE(load_run(f.run.dir).attempts.at(0).cancel_requested_at.empty());
  CHECK(f.slurm.runner.count("scancel", {"100"}) == 1);
}

TEST_CASE("cancel of a job that already ended runs no scancel") {
  CancelFixture f;
  f.slurm.jobs[0].state = "COMPLETED";
  cancel_jobs(f.cancel, f.slurm.ctx, f.out);
  CHECK(f.out.lines == std::vector<std::string>{"job 100: already ended (COMPLETED)"});
  CHECK(f.slurm.runner.count("scancel") == 0);
}

TEST_CASE("a job that does not end after scancel is an error once the time is up") {
  CancelFixture f;
  f.slurm.runner.on("scancel", {}, test::exits(0));  // Slurm takes the request and does nothing
  std::string error = test::user_error_of([&] { cancel_jobs(f.cancel, f.slurm.ctx, f.out); });
  CHECK_THAT(error, Catch::Contains("job 100 is still PENDING 30 s after scancel"));
  CHECK(f.slurm.clock.mono >= 1030);
}

TEST_CASE("cancel refuses to act when Slurm cannot be asked, and on ids Slurm does not know") {
  CancelFixture f;
  SECTION("controller down") {
    f.slurm.controller_down = true;
    CHECK_THAT(test::user_error_of([&] { cancel_jobs(f.cancel, f.slurm.ctx, f.out); }),
               Catch::Contains("cannot cancel: Slurm could not be asked"));
  }
  SECTION("an unknown job id") {
    f.cancel.targets = {"4242"};
    CHECK_THAT(test::user_error_of([&] { cancel_jobs(f.cancel, f.slurm.ctx, f.out); }),
               Catch::Contains("job 4242: neither squeue nor sacct knows this job; nothing was cancelled"));
  }
  CHECK(f.slurm.runner.count("scancel") == 0);
}

TEST_CASE("cancel also cancels a job the ledger never recorded, found by the run's token") {
  CancelFixture f;
  // A second attempt whose sbatch timed out: the ledger knows no job for it,
  // but the controller made one.
  f.slurm.sbatch = FakeSlurm::Sbatch::TimesOutBeforeJob;
  f.req.again = true;
  CHECK_FALSE(test::user_error_of([&] { f.submit(); }).empty());
  Run second;
  for (const Run& r : f.runs())
    if (r.attempts.at(0).outcome == Outcome::Unconfirmed) second = r;
  REQUIRE_FALSE(second.id.empty());
  f.slurm.add("150", job_comment(second.attempts.at(0).token));
  f.cancel.targets = {second.id};
  cancel_jobs(f.cancel, f.slurm.ctx, f.out);
  CHECK(f.slurm.job("150")->state == "CANCELLED");
  CHECK(load_run(second.dir).attempts.at(0).job_id == "150");
}

TEST_CASE("cancel of runs whose jobs' ends are recorded asks Slurm nothing") {
  CancelFixture f;
  f.slurm.jobs[0].state = "COMPLETED";
  f.slurm.jobs[0].in_squeue = false;
  cancel_jobs(f.cancel, f.slurm.ctx, f.out);  // reads the end, and records it
  REQUIRE(load_run(f.run.dir).attempts.at(0).end.has_value());
  f.slurm.runner.calls.clear();
  f.out.lines.clear();
  cancel_jobs(f.cancel, f.slurm.ctx, f.out);
  CHECK(f.out.lines == std::vector<std::string>{"job 100: already ended (COMPLETED)"});
  CHECK(f.slurm.runner.calls.empty());
}

TEST_CASE("cancel sorts the jobs before scancel: the ended are said, the unreadable fail, the rest are cancelled") {
  JobStates states;
  states.queue_answered = true;
  auto job = [&](const std::string& id, JobState state, const std::string& reason = "") {
    Job j;
    j.id = id;
    j.state = state;
    j.reason = reason;
    states.jobs[id] = j;
  };
  job("11", JobState::Running);
  job("12", JobState::Completed);
  job("13", JobState::Unknown, "sacct does not know it");
  job("14", JobState::Pending);
  CancelTargets t = sort_cancel_targets({"14", "12", "13", "11"}, states);
  CHECK(t.live == std::vector<std::string>{"14", "11"});
  CHECK(t.ended == std::vector<std::string>{"job 12: already ended (COMPLETED)"});
  CHECK(t.unknown == std::vector<std::string>{"job 13: sacct does not know it; nothing was cancelled"});
}
