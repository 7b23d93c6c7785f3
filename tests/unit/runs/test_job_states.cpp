// What Slurm says about jobs, merged from squeue and sacct (jobs.cpp), when a
// polling loop may believe a job ended, and the trainer's progress file.
#include "catch.hpp"
#include <algorithm>
#include <set>

#include "fake_runner.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "runs/job_states.hpp"

using namespace ddpctl;
using test::FakeSlurm;
using test::TempDir;

TEST_CASE("squeue answers first, jobs it forgot come from sacct, jobs neither knows are UNKNOWN") {
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

TEST_CASE("squeue is asked for the runs' jobs only, not for the whole queue") {
  SECTION("24.11: --json honours --jobs, one call for every job asked") {
    FakeSlurm s("24.11");
    for (int i = 1; i <= 50; ++i) s.add(std::to_string(i), "", "PENDING");
    JobStates st = lookup_jobs(s.slurm, {"3", "7"});
    CHECK(st.jobs.at("3").state == JobState::Pending);
    CHECK(s.runner.count("squeue", {"--json", "--jobs=3,7"}) == 1);
    CHECK(s.runner.count("squeue") == 1);
    CHECK(s.runner.count("sacct") == 0);
  }
  SECTION("22.05: --json lists every job whatever it is asked; seen once, the format string filters after") {
    FakeSlurm s("22.05");
    for (int i = 1; i <= 50; ++i) s.add(std::to_string(i), "", i == 7 ? "FAILED" : "RUNNING", "g1");
    s.job("7")->exit = 3;
    JobStates first = lookup_jobs(s.slurm, {"3", "7"});
    CHECK(first.jobs.at("3").state == JobState::Running);
    CHECK(first.jobs.at("7").exit.code == 3);
    JobStates next = lookup_jobs(s.slurm, {"3", "7"});
    CHECK(s.runner.count("squeue", {"--json"}) == 1);
    CHECK(s.runner.count("squeue", {"-o", "--jobs=3,7"}) == 1);
    CHECK(next.jobs.at("3").state == JobState::Running);
    CHECK(next.jobs.at("3").source == "squeue");
    // The format string has no exit codes: sacct adds the ended job's.
    CHECK(next.jobs.at("7").state == JobState::Failed);
    CHECK(next.jobs.at("7").exit.code == 3);
    CHECK(s.runner.count("sacct", {"--jobs=7"}) == 1);
  }
  SECTION("jobs squeue no longer knows at all: its 'Invalid job id' is an answer, and sacct says how they ended") {
    FakeSlurm s("24.11");
    s.add("5", "", "COMPLETED").in_squeue = false;
    JobStates st = lookup_jobs(s.slurm, {"5"});
    CHECK(st.queue_answered);
    CHECK(st.error.empty());
    CHECK(st.jobs.at("5").state == JobState::Completed);
    CHECK(st.jobs.at("5").source == "sacct");
  }
  SECTION("long lists are asked in chunks") {
    FakeSlurm s("24.11");
    std::vector<std::string> ids;
    for (size_t i = 1; i <= SlurmClient::kJobsPerQuery + 1; ++i) ids.push_back(std::to_string(i)), s.add(ids.back());
    JobStates st = lookup_jobs(s.slurm, ids);
    CHECK(s.runner.count("squeue", {"--json"}) == 2);
    CHECK(st.jobs.at(ids.back()).state == JobState::Pending);
    CHECK(st.jobs.at(ids.front()).state == JobState::Pending);
  }
}

TEST_CASE("a watch polls no faster than the jobs change: doubling while nothing does, back at the first change") {
  PollBackoff b(2, 30);
  CHECK(b.after_poll(true) == 2);
  CHECK(b.after_poll(false) == 2);
  CHECK(b.after_poll(false) == 4);
  CHECK(b.after_poll(false) == 8);
  CHECK(b.after_poll(false) == 16);
  CHECK(b.after_poll(false) == 30);
  CHECK(b.after_poll(false) == 30);
  CHECK(b.after_poll(true) == 2);
  CHECK(b.after_poll(false) == 2);
  CHECK(b.after_poll(false) == 4);
  PollBackoff tiny(60, 30);  // a base above the cap keeps the base
  CHECK(tiny.after_poll(false) == 60);
  CHECK(tiny.after_poll(false) == 60);
}

TEST_CASE("within one refresh, squeue is asked once: later lookups of the same jobs reuse the answer") {
  FakeSlurm s("24.11");
  s.add("1", "", "RUNNING", "g1");
  s.add("2", "", "PENDING");
  {
    SlurmClient::Snapshot refresh(s.slurm);
    lookup_jobs(s.slurm, {"1", "2"});
    JobStates winners = lookup_jobs(s.slurm, {"2"});  // a race's winner, among them
    CHECK(winners.jobs.at("2").state == JobState::Pending);
    CHECK(s.runner.count("squeue") == 1);
    lookup_jobs(s.slurm, {"3"});  // not covered: asked
    CHECK(s.runner.count("squeue") == 2);
  }
  lookup_jobs(s.slurm, {"1"});  // the next refresh asks again
  CHECK(s.runner.count("squeue") == 3);
}

TEST_CASE("progress lines: epoch, bar, throughput, ETA") {
  Progress p;
  p.epoch = 2;
  p.epochs = 10;
  p.step = 250;
  p.steps = 500;
  p.samples_per_s = 1520.4;
  p.eta_s = 340;
  CHECK(format_progress(p) == "epoch 2/10 [#####-----] 250/500 1520 img/s ETA 5m40s");
  CHECK(format_duration(3725) == "1h02m");
  CHECK(format_duration(12) == "12s");
}

TEST_CASE("progress files are read, and a missing one is no progress") {
  TempDir t;
  std::string path = t.path + "/p.json";
  CHECK_FALSE(read_progress(path));
  write_file_atomic(path, R"({"epoch":1,"epochs":3,"step":5,"steps":10,"samples_per_s":99.5,"eta_s":12})");
  auto p = read_progress(path);
  REQUIRE(p);
  CHECK(p->steps == 10);
  CHECK(progress_path("/o", "job", "12") == "/o/job_12.progress.json");
}

TEST_CASE("sacct is asked once for many jobs, in more calls only where the ids would not fit one argument") {
  FakeSlurm s;
  std::vector<std::string> few, many;
  for (int i = 0; i < 1500; ++i) few.push_back(std::to_string(1000000 + i));
  CHECK(s.slurm.attempts(few).answered);
  CHECK(s.runner.count("sacct", {"--duplicates"}) == 1);
  // 20,000 ids of 8 digits: 180,000 characters, more than one argument may hold.
  for (int i = 0; i < 20000; ++i) many.push_back(std::to_string(10000000 + i));
  s.runner.calls.clear();
  CHECK(s.slurm.attempts(many).answered);
  CHECK(s.runner.calls.size() == 2);
  size_t asked = 0;
  for (const auto& argv : s.runner.calls)
    for (const auto& a : argv)
      if (a.rfind("--jobs=", 0) == 0) {
        CHECK(a.size() <= SlurmClient::kJobListChars);
        asked += static_cast<size_t>(std::count(a.begin(), a.end(), ',')) + 1;
      }
  CHECK(asked == many.size());
}

TEST_CASE("a job that lost a node and went on (--no-kill) has a RESIZING record in sacct: the same attempt, not a requeue") {
  FakeSlurm s;
  auto& resized = s.add("5", "ddpctl:eeeeeeeeeeee", "COMPLETED", "g[1,3]");
  resized.in_squeue = false;
  resized.earlier = {"RESIZING"};  // 22.05's record of g[1-3] until g2 was removed
  JobStates st = lookup_jobs(s.slurm, {"5"});
  CHECK(st.jobs.at("5").state == JobState::Completed);
  CHECK(st.jobs.at("5").requeues == 0);
  CHECK(st.final == std::set<std::string>{"5"});
}

TEST_CASE("an ended job is final only once squeue has forgotten it and sacct says it ended") {
  FakeSlurm s;
  s.add("1", "ddpctl:aaaaaaaaaaaa", "FAILED", "g1");                    // in squeue: may be requeued
  s.add("2", "ddpctl:bbbbbbbbbbbb", "COMPLETED", "g1").in_squeue = false;
  s.add("3", "ddpctl:cccccccccccc", "RUNNING", "g1").in_squeue = false;  // accounting behind
  auto& requeued = s.add("4", "ddpctl:dddddddddddd", "COMPLETED", "g1");
  requeued.in_squeue = false;
  requeued.earlier = {"NODE_FAIL", "PREEMPTED"};
  JobStates st = lookup_jobs(s.slurm, {"1", "2", "3", "4"});
  CHECK(st.final == std::set<std::string>{"2", "4"});
  CHECK(st.jobs.at("4").requeues == 2);
  REQUIRE(st.earlier.at("4").size() == 2);
  CHECK(st.earlier.at("4")[0].state == JobState::NodeFail);
  CHECK(s.runner.count("sacct") == 1);
  SECTION("nothing is final when squeue did not answer") {
    s.controller_down = true;
    CHECK(lookup_jobs(s.slurm, {"1", "2", "3", "4"}).final.empty());
  }
}
