// What Slurm says about jobs, merged from squeue and sacct (jobs.cpp), and
// when a polling loop may believe a job ended.
#include <catch2/catch.hpp>

#include "fake_runner.hpp"
#include "jobs.hpp"

using namespace ddpctl;
using test::FakeSlurm;

TEST_CASE("squeue answers first; jobs it forgot come from sacct; jobs neither knows are UNKNOWN") {
  FakeSlurm s;
  s.add("1", "", "RUNNING", "g1");
  s.add("2", "", "COMPLETED", "g2").in_squeue = false;
  JobStates st = lookup_jobs(s.slurm, {"1", "2", "3"});
  CHECK(st.queue_answered);
  CHECK(st.jobs.at("1").state == JobState::Running);
  CHECK(st.jobs.at("1").source == "squeue");
  CHECK(st.jobs.at("2").state == JobState::Completed);
  CHECK(st.jobs.at("2").source == "sacct");
  CHECK(st.jobs.at("3").state == JobState::Unknown);
  CHECK(st.jobs.at("3").reason == "neither squeue nor sacct knows this job");
  CHECK(s.runner.count("sacct", {"--jobs=2,3"}) == 1);  // sacct is asked only for what squeue forgot
}

TEST_CASE("with the controller down, accounting is final only for ended jobs") {
  FakeSlurm s;
  s.add("1", "", "RUNNING", "g1");
  s.add("2", "", "COMPLETED", "g2");
  s.controller_down = true;
  JobStates st = lookup_jobs(s.slurm, {"1", "2"});
  CHECK_FALSE(st.queue_answered);
  CHECK_THAT(st.error, Catch::Contains("is slurmctld up?"));
  CHECK(st.jobs.at("1").state == JobState::Unknown);
  CHECK(st.jobs.at("1").reason == "the controller did not answer; accounting last saw it RUNNING");
  CHECK(st.jobs.at("2").state == JobState::Completed);
  SECTION("and without accounting nothing is known") {
    s.accounting = false;
    JobStates none = lookup_jobs(s.slurm, {"2"});
    CHECK(none.jobs.at("2").state == JobState::Unknown);
    CHECK(none.jobs.at("2").reason == "Slurm did not answer");
  }
}

TEST_CASE("squeue without sacct: a job that left the queue cannot be said to have ended well") {
  FakeSlurm s;
  s.accounting = false;
  JobStates st = lookup_jobs(s.slurm, {"9"});
  CHECK(st.jobs.at("9").state == JobState::Unknown);
  CHECK(st.jobs.at("9").reason == "no longer in squeue, and sacct cannot say how it ended");
  CHECK_THAT(st.error, Catch::Contains("accounting storage is disabled"));
}

TEST_CASE("an end is believed once it lasted: 1 s, or 10 s for states a requeue passes through") {
  test::FakeClock clock;
  EndWatcher w(clock);
  Job job;
  job.state = JobState::Completed;
  CHECK_FALSE(w.ended(job));
  clock.sleep(1);
  CHECK(w.ended(job));

  EndWatcher requeue(clock);
  job.state = JobState::Failed;
  CHECK_FALSE(requeue.ended(job));
  clock.sleep(5);
  CHECK_FALSE(requeue.ended(job));
  job.state = JobState::Pending;  // it was a requeue after all
  CHECK_FALSE(requeue.ended(job));
  job.state = JobState::Failed;
  CHECK_FALSE(requeue.ended(job));
  clock.sleep(9);
  CHECK_FALSE(requeue.ended(job));  // the clock starts again at the new sighting
  clock.sleep(1);
  CHECK(requeue.ended(job));
}
