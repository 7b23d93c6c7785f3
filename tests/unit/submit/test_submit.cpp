// The submit workflow's decisions through a scripted Slurm (fake_runner.hpp):
// the ledger before and after sbatch, settling unclear attempts by token,
// and never a second job for the same run.
#include "catch.hpp"
#include <ctime>
#include <stdexcept>
#include <fmt/format.h>
#include <filesystem>

#include "fake_runner.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "fixtures.hpp"
#include "submit/submit.hpp"
#include "base/lock.hpp"
#include <unistd.h>

using namespace ddpctl;
using test::FakeSlurm;

namespace {

using SubmitTest = test::SubmitFixture;

std::vector<Outcome> outcomes(const Run& run) {
  std::vector<Outcome> out;
  for (const auto& a : load_run(run.dir).attempts) out.push_back(a.outcome);
  return out;
}

}  // namespace

TEST_CASE("submit records the intent before sbatch runs and the job after") {
  SubmitTest f;
  std::vector<Outcome> seen_during_sbatch;
  f.slurm.on_submit = [&](FakeSlurm::FakeJob&) { seen_during_sbatch = outcomes(f.runs().at(0)); };
  SubmitResult r = f.submit();
  REQUIRE(r.kind == SubmitResult::Kind::Submitted);
  CHECK(seen_during_sbatch == std::vector<Outcome>{Outcome::Intent});
  CHECK(r.attempt.job_id == "100");
  CHECK(outcomes(r.run) == std::vector<Outcome>{Outcome::Submitted});
  CHECK(f.slurm.jobs.at(0).comment == job_comment(r.attempt.token));
  CHECK(std::filesystem::is_directory(f.tmp.path + "/logs"));
}

TEST_CASE("a second submit of the same spec while its job is queued makes no job") {
  SubmitTest f;
  SubmitResult first = f.submit();
  SubmitResult again = f.submit();
  CHECK(again.kind == SubmitResult::Kind::AlreadySubmitted);
  CHECK(again.active.job_id == first.attempt.job_id);
  CHECK(again.active.run_id == first.run.id);
  CHECK(f.slurm.runner.count("sbatch") == 1);
  SECTION("--again submits another, in a run of its own") {
    f.req.again = true;
    SubmitResult third = f.submit();
    CHECK(third.kind == SubmitResult::Kind::Submitted);
    CHECK(f.slurm.runner.count("sbatch") == 2);
    CHECK(f.runs().size() == 2);
  }
  SECTION("once the job ended, the spec is submitted again") {
    f.slurm.jobs[0].state = "COMPLETED";
    CHECK(f.submit().kind == SubmitResult::Kind::Submitted);
    CHECK(f.slurm.runner.count("sbatch") == 2);
  }
  SECTION("other overrides are another run") {
    f.req.sets = {"nodes=2"};
    CHECK(f.submit().kind == SubmitResult::Kind::Submitted);
  }
}

TEST_CASE("sbatch that lost its answer after making the job: found by its token at once") {
  SubmitTest f;
  f.slurm.sbatch = FakeSlurm::Sbatch::LosesAnswer;
  SubmitResult r = f.submit();
  REQUIRE(r.kind == SubmitResult::Kind::Submitted);
  CHECK(r.attempt.job_id == "100");
  CHECK_THAT(r.attempt.reason, Catch::Contains("found by its token in squeue"));
  CHECK(f.slurm.jobs.size() == 1);
}

TEST_CASE("sbatch that timed out before making a job: unconfirmed, then settled absent and retried in the same run") {
  SubmitTest f;
  f.slurm.sbatch = FakeSlurm::Sbatch::TimesOutBeforeJob;
  CHECK_THAT(test::user_error_of([&] { f.submit(); }), Catch::Contains("recorded as unconfirmed"));
  REQUIRE(f.runs().size() == 1);
  CHECK(outcomes(f.runs()[0]) == std::vector<Outcome>{Outcome::Unconfirmed});

  f.slurm.sbatch = FakeSlurm::Sbatch::Ok;
  SubmitResult r = f.submit();
  REQUIRE(r.kind == SubmitResult::Kind::Submitted);
  REQUIRE(f.runs().size() == 1);  // the retry is in the same run: the ledger tells the whole story
  CHECK(outcomes(f.runs()[0]) == std::vector<Outcome>{Outcome::Absent, Outcome::Submitted});
  CHECK(f.slurm.jobs.size() == 1);
}

TEST_CASE("an attempt whose intent is all the ledger has: its job is found by its token, not submitted twice") {
  // ddpctl killed after sbatch made the job, before it wrote the outcome.
  SubmitTest f;
  f.slurm.on_submit = [](FakeSlurm::FakeJob&) { throw std::runtime_error("killed"); };
  CHECK_THROWS_WITH(f.submit(), "killed");
  REQUIRE(f.runs().size() == 1);
  CHECK(outcomes(f.runs()[0]) == std::vector<Outcome>{Outcome::Intent});
  REQUIRE(f.slurm.jobs.size() == 1);
  f.slurm.on_submit = nullptr;
  SubmitResult r = f.submit();
  CHECK(r.kind == SubmitResult::Kind::AlreadySubmitted);
  CHECK(r.active.job_id == "100");
  CHECK(f.slurm.runner.count("sbatch") == 1);
  CHECK(outcomes(f.runs()[0]) == std::vector<Outcome>{Outcome::Submitted});
}

TEST_CASE("sbatch --parsable's jobid with its cluster: the job and its cluster are recorded") {
  SubmitTest f;
  f.slurm.runner.on("sbatch", {"--parsable"}, [&](const std::vector<std::string>& argv) {
    FakeSlurm::FakeJob& j = f.slurm.add("100");
    for (const auto& a : argv)
      if (a.rfind("--comment=", 0) == 0) j.comment = a.substr(10);
    return test::exits(0, "100;local\n");
  });
  SubmitResult r = f.submit();
  REQUIRE(r.kind == SubmitResult::Kind::Submitted);
  CHECK(r.attempt.job_id == "100");
  CHECK(r.attempt.cluster == "local");
  Attempt recorded = load_run(r.run.dir).attempts.at(0);
  CHECK(recorded.outcome == Outcome::Submitted);
  CHECK(recorded.job_id == "100");
  CHECK(recorded.cluster == "local");
  CHECK(f.slurm.jobs.size() == 1);
}

TEST_CASE("an unclear attempt whose job appeared later is adopted, not submitted twice") {
  SubmitTest f;
  f.slurm.sbatch = FakeSlurm::Sbatch::TimesOutBeforeJob;
  CHECK_FALSE(test::user_error_of([&] { f.submit(); }).empty());
  // The controller made the job after all (sbatch was only slow to hear it).
  Attempt a = load_run(f.runs()[0].dir).attempts.at(0);
  f.slurm.add("123", job_comment(a.token));
  f.slurm.sbatch = FakeSlurm::Sbatch::Ok;
  SubmitResult r = f.submit();
  CHECK(r.kind == SubmitResult::Kind::AlreadySubmitted);
  CHECK(r.active.job_id == "123");
  CHECK(f.slurm.runner.count("sbatch") == 1);
  CHECK(outcomes(f.runs()[0]) == std::vector<Outcome>{Outcome::Submitted});
}

TEST_CASE("an unclear attempt blocks a new submission while Slurm cannot be asked") {
  SubmitTest f;
  f.slurm.sbatch = FakeSlurm::Sbatch::TimesOutBeforeJob;
  CHECK_FALSE(test::user_error_of([&] { f.submit(); }).empty());
  f.slurm.controller_down = true;
  f.slurm.accounting = false;
  f.slurm.sbatch = FakeSlurm::Sbatch::Ok;
  std::string error = test::user_error_of([&] { f.submit(); });
  CHECK_THAT(error, Catch::Contains("may or may not have created a job"));
  CHECK_THAT(error, Catch::Contains("Not submitting again until it is settled"));
  CHECK(f.slurm.runner.count("sbatch") == 1);
}

TEST_CASE("a job whose state cannot be read blocks a new submission") {
  SubmitTest f;
  f.submit();
  f.slurm.controller_down = true;
  f.slurm.accounting = false;
  CHECK_THAT(test::user_error_of([&] { f.submit(); }), Catch::Contains("cannot tell whether job 100"));
  CHECK(f.slurm.runner.count("sbatch") == 1);
}

TEST_CASE("a rejected sbatch is recorded and reported with Slurm's reason") {
  SubmitTest f;
  f.slurm.sbatch = FakeSlurm::Sbatch::Rejects;
  CHECK_THAT(test::user_error_of([&] { f.submit(); }),
             Catch::Contains("sbatch rejected the job: Invalid account or account/partition combination specified"));
  CHECK(outcomes(f.runs().at(0)) == std::vector<Outcome>{Outcome::Rejected});
  SECTION("a rejected attempt does not block the next submission") {
    f.slurm.sbatch = FakeSlurm::Sbatch::Ok;
    CHECK(f.submit().kind == SubmitResult::Kind::Submitted);
  }
}

TEST_CASE("a dry run asks nothing of the queue and submits nothing") {
  SubmitTest f;
  f.req.dry_run = true;
  SubmitResult r = f.submit();
  CHECK(r.kind == SubmitResult::Kind::DryRun);
  CHECK_THAT(r.would_run, Catch::Contains("--chdir="));
  CHECK(f.slurm.runner.count("sbatch") == 0);
  CHECK(f.slurm.runner.count("squeue") == 0);
  CHECK(f.runs().empty());
}

TEST_CASE("the preflight stops a shape the cluster cannot hold, before anything is recorded") {
  SubmitTest f;
  // A profile that claims more than the cluster has: only sinfo can tell.
  write_file_atomic(f.tmp.path + "/drift.yaml",
                    "name: drift\ngpu_request: gres\ndefault_partition: cpu\ngpu_types:\n  a100: {gres: a100}\n"
                    "partitions:\n  a100-80gb: {nodes: 2, gpus_per_node: 8, gpu_types: [a100]}\n"
                    "  cpu: {nodes: 4, gpus_per_node: 0}\n");
  f.req.sets = {"cluster=drift.yaml", "partition=a100-80gb", "gpus_per_node=8", "gpu_type=a100", "procs_per_node=8"};
  std::string error = test::user_error_of([&] { f.submit(); });
  CHECK_THAT(error, Catch::Contains("gpus_per_node: 8 a100 GPUs per node asked, but nodes in partition a100-80gb have "
                                    "at most 4"));
  CHECK(f.slurm.runner.count("sbatch") == 0);
  CHECK(f.runs().empty());
}

TEST_CASE("find_job_by_token: squeue, then sacct, then MinJobAge decide") {
  FakeSlurm s;
  long long now = static_cast<long long>(std::time(nullptr));
  s.add("7", "ddpctl:aaa");
  CHECK(find_job_by_token(s.slurm, "aaa", now).presence == Presence::Found);
  SECTION("a job squeue forgot is found in sacct") {
    s.jobs[0].in_squeue = false;
    Lookup l = find_job_by_token(s.slurm, "aaa", now);
    CHECK(l.presence == Presence::Found);
    CHECK(l.job.source == "sacct");
  }
  SECTION("silence within MinJobAge proves absence") {
    CHECK(find_job_by_token(s.slurm, "bbb", now - 10).presence == Presence::Absent);
  }
  SECTION("after MinJobAge only an accounting that keeps comments proves absence") {
    CHECK(find_job_by_token(s.slurm, "bbb", now - 1000).presence == Presence::Absent);
    s.jobs[0].comment.clear();  // accounting without AccountingStoreFlags=job_comment
    Lookup l = find_job_by_token(s.slurm, "bbb", now - 1000);
    CHECK(l.presence == Presence::Unknown);
    CHECK_THAT(l.why, Catch::Contains("older than MinJobAge"));
  }
  SECTION("with the controller down nothing is proven") {
    s.controller_down = true;
    s.jobs[0].in_sacct = false;
    Lookup l = find_job_by_token(s.slurm, "bbb", now);
    CHECK(l.presence == Presence::Unknown);
    CHECK_THAT(l.why, Catch::Contains("Slurm could not be asked"));
  }
}

TEST_CASE("wait_for_job says each new state until the job starts, and with follow until it ends") {
  SubmitTest f;
  SubmitResult r = f.submit();
  test::RecordingOutput out;
  int polls = 0;
  f.slurm.clock.on_sleep = [&] {
    ++polls;
    auto& j = f.slurm.jobs[0];
    if (polls == 2) j.state = "RUNNING", j.nodes = "g1";
    if (polls == 4) j.state = "COMPLETED";
  };
  SECTION("--wait returns once it runs") {
    wait_for_job(f.slurm.ctx, r.run, r.attempt, false, out);
    CHECK(out.lines == std::vector<std::string>{"job 100: PENDING", "job 100: RUNNING on g1"});
  }
  SECTION("--follow returns at COMPLETED, after the end has lasted") {
    wait_for_job(f.slurm.ctx, r.run, r.attempt, true, out);
    CHECK(out.lines.back() == "job 100: COMPLETED");
  }
  SECTION("--follow of a job that fails says so with its exit code") {
    f.slurm.clock.on_sleep = [&] { f.slurm.jobs[0].state = "FAILED", f.slurm.jobs[0].exit = 1; };
    f.slurm.jobs[0].in_squeue = true;
    std::string error = test::user_error_of([&] { wait_for_job(f.slurm.ctx, r.run, r.attempt, true, out); });
    CHECK_THAT(error, Catch::Contains("job 100 ended FAILED"));
    // A requeue passes through FAILED: the end is believed only after 10 s.
    CHECK(f.slurm.clock.mono >= 1010);
  }
}

TEST_CASE("on Slurm 24.11 too: the preflight reads nodes from scontrol, and a queued job is not submitted twice") {
  test::SubmitFixture f("24.11");
  SubmitResult first = f.submit();
  REQUIRE(first.kind == SubmitResult::Kind::Submitted);
  CHECK(f.slurm.runner.count("scontrol", {"show", "nodes", "--json"}) == 1);
  SubmitResult again = f.submit();
  CHECK(again.kind == SubmitResult::Kind::AlreadySubmitted);
  CHECK(f.slurm.runner.count("sbatch") == 1);
}

TEST_CASE("a job that appears after its attempt was judged absent is adopted, never doubled") {
  SubmitTest f;
  f.slurm.sbatch = FakeSlurm::Sbatch::TimesOutBeforeJob;
  CHECK_FALSE(test::user_error_of([&] { f.submit(); }).empty());
  std::string late_token = load_run(f.runs().at(0).dir).attempts.at(0).token;
  // The next submit judges it absent, and its own sbatch is rejected.
  f.slurm.sbatch = FakeSlurm::Sbatch::Rejects;
  CHECK_FALSE(test::user_error_of([&] { f.submit(); }).empty());
  REQUIRE(outcomes(f.runs().at(0)) == std::vector<Outcome>{Outcome::Absent, Outcome::Rejected});
  // Then the first sbatch's job shows up after all (another login node's
  // sbatch, a controller that was slow to record it).
  f.slurm.add("160", job_comment(late_token));
  f.slurm.sbatch = FakeSlurm::Sbatch::Ok;
  SubmitResult r = f.submit();
  CHECK(r.kind == SubmitResult::Kind::AlreadySubmitted);
  CHECK(r.active.job_id == "160");
  CHECK(f.slurm.runner.count("sbatch", {"--parsable"}) == 2);  // no third sbatch
  Attempt adopted = load_run(f.runs().at(0).dir).attempts.at(0);
  CHECK(adopted.outcome == Outcome::Submitted);
  CHECK(adopted.job_id == "160");
  CHECK_THAT(adopted.reason, Catch::StartsWith("absent ("));
}

TEST_CASE("the intent records which ddpctl submits it") {
  SubmitTest f;
  Attempt a = f.submit().attempt;
  CHECK(a.pid == getpid());
  CHECK(a.host == host_name());
  CHECK(load_run(f.runs().at(0).dir).attempts.at(0).pid == getpid());
}

TEST_CASE("a maintenance reservation on every fitting node: a warning with the time that starts now, --fit-time takes it") {
  SubmitTest f;
  long long now = static_cast<long long>(std::time(nullptr));
  // The cpu partition's nodes (g1-g4) are reserved from 165 s ahead; the
  // spec asks for 5 minutes: 2 minutes end before it with time to spare.
  // (A rule of its own: the same words would queue behind FakeSlurm's "none".)
  f.slurm.runner.on("env", {"show", "reservation"},
                    test::exits(0, fmt::format("ReservationName=maint StartTime={} EndTime={} Duration=01:00:00 "
                                         "Nodes=g[1-4] NodeCnt=4 Flags=MAINT,SPEC_NODES Users=root State=INACTIVE\n",
                                         now + 165, now + 165 + 3600)));
  SECTION("submitted as it is, with the reason and the offer") {
    SubmitResult r = f.submit();
    REQUIRE(r.kind == SubmitResult::Kind::Submitted);
    REQUIRE(f.out.warnings.size() == 1);
    CHECK_THAT(f.out.warnings[0], Catch::Contains("reservation maint (maintenance)") &&
                                      Catch::Contains("before its 5m time limit would end") &&
                                      Catch::Contains("--time 2m or less starts now"));
    CHECK_FALSE(r.fitted_time_s);
    CHECK_THAT(read_file(r.run.dir + "/" + r.attempt.script), Catch::Contains("#SBATCH --time=00:05:00"));
  }
  SECTION("--fit-time: the script and the record hold the shorter limit") {
    f.req.fit_time = true;
    SubmitResult r = f.submit();
    REQUIRE(r.kind == SubmitResult::Kind::Submitted);
    CHECK(r.fitted_time_s == 120);
    CHECK(f.out.warnings.empty());
    REQUIRE(f.out.notes.size() == 1);
    CHECK(f.out.notes[0] == "--fit-time: time limit 00:02:00 instead of 00:05:00, so that it ends before reservation "
                            "maint begins");
    CHECK_THAT(read_file(r.run.dir + "/" + r.attempt.script), Catch::Contains("#SBATCH --time=00:02:00"));
  }
  SECTION("--fit-time needs the preflight") {
    f.req.fit_time = true;
    f.req.preflight = false;
    CHECK_THAT(test::user_error_of([&] { f.submit(); }), Catch::Contains("needs the preflight"));
  }
}

TEST_CASE("submit --fit-time with nothing in the way keeps the time limit and says so") {
  SubmitTest f;
  f.req.fit_time = true;
  SubmitResult r = f.submit();
  CHECK_FALSE(r.fitted_time_s);
  REQUIRE(f.out.notes.size() == 1);
  CHECK(f.out.notes[0] == "--fit-time: no reservation is in the way; the time limit stays 00:05:00");
}
