// The status table's rows (status.cpp): jobs from Slurm merged with the
// trainer's progress file, the race records and attempts that made no job.
// Ended runs kept in the ledger and the index: test_status_ended.cpp.
#include "catch.hpp"
#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "fake_runner.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "fixtures.hpp"
#include "runs/ledger.hpp"
#include "runs/run_store.hpp"
#include "status/status.hpp"
#include "submit/submit.hpp"
#include "base/text.hpp"
#include "agent/watchdog.hpp"

using namespace ddpctl;
using test::FakeSlurm;

namespace {

struct StatusFixture : test::SubmitFixture {
  using SubmitFixture::SubmitFixture;
  StatusReport status(std::vector<std::string> targets = {}) {
    StatusRequest r;
    r.targets = std::move(targets);
    r.runs_root = req.runs_root;
    r.json = true;
    return collect_status(r, slurm.slurm, slurm.clock.now());
  }
};

}  // namespace

TEST_CASE("a running job's row carries the trainer's progress") {
  StatusFixture f;
  SubmitResult r = f.submit();
  f.slurm.jobs[0].state = "RUNNING";
  f.slurm.jobs[0].nodes = "g1";
  write_file_atomic(f.tmp.path + "/logs/unit_100.progress.json",
                    R"({"epoch": 2, "epochs": 10, "step": 5, "steps": 10, "samples_per_s": 1520, "eta_s": 340})");
  StatusReport s = f.status();
  REQUIRE(s.rows.size() == 1);
  const StatusRow& row = s.rows[0];
  CHECK(row.run == r.run.id);
  CHECK(row.state == "RUNNING");
  CHECK(row.tone == Tone::Good);
  CHECK(row.nodes == "g1");
  CHECK(row.info == "epoch 2/10 [#####-----] 5/10 1520 img/s ETA 5m40s");
  CHECK(row.json["progress"]["epoch"] == 2);
  CHECK_FALSE(s.all_done);
}

TEST_CASE("an ended job's row: squeue forgot it, sacct says how it ended") {
  StatusFixture f;
  f.submit();
  f.slurm.jobs[0].state = "FAILED";
  f.slurm.jobs[0].reason = "NonZeroExitCode";
  f.slurm.jobs[0].exit = 3;
  f.slurm.jobs[0].in_squeue = false;
  StatusReport s = f.status();
  REQUIRE(s.rows.size() == 1);
  CHECK(s.rows[0].state == "FAILED");
  CHECK(s.rows[0].info == "exited with exit code 3");
  CHECK(s.rows[0].json["source"] == "sacct");
  CHECK(s.all_done);
}

TEST_CASE("a job ending after its watchdog cancelled it says so while squeue shows it COMPLETING") {
  StatusFixture f;
  f.submit();
  f.slurm.jobs[0].state = "COMPLETING";
  f.slurm.jobs[0].nodes = "g[1-2]";
  StallRecord r;
  r.stalled = true;
  r.since = 1000, r.detected_at = 1021, r.for_s = 21, r.stall_after_s = 20;
  r.action = "cancel", r.taken = WatchdogOutcome::Cancelled, r.result = "scancel 100: done";
  r.basis = "the progress pattern", r.detail = "no rank stands out";
  r.why = "no progress (the progress pattern) for 21s: no rank stands out";
  r.culprit = "rank 1 (g1) is not in a collective — at multinode.py:61 in _run_epoch; ranks 0, 2, 3 (g1, g2) wait in "
              "backward (the gradient all_reduce)";
  r.culprit_named = true;
  r.stopped = {{1, 1, "g1"}};
  write_file_atomic(f.tmp.path + "/logs/unit_100.stall.json", stall_record_json(r).dump());
  StatusReport s = f.status();
  REQUIRE(s.rows.size() == 1);
  CHECK(s.rows[0].state == "COMPLETING");
  CHECK(s.rows[0].info == "was cancelled by the watchdog: " + describe_stall(r));
  CHECK_THAT(s.rows[0].info, Catch::Contains("rank 1 (g1) is not in a collective — at multinode.py:61"));
  // Another attempt's record is not this one's.
  r.attempt = 1;
  write_file_atomic(f.tmp.path + "/logs/unit_100.stall.json", stall_record_json(r).dump());
  CHECK(f.status().rows[0].info.find("watchdog") == std::string::npos);
}

TEST_CASE("with the controller down, rows say UNKNOWN and the report says why") {
  StatusFixture f;
  f.submit();
  f.slurm.controller_down = true;
  f.slurm.accounting = false;
  StatusReport s = f.status();
  REQUIRE(s.rows.size() == 1);
  CHECK(s.rows[0].state == "UNKNOWN");
  CHECK(s.rows[0].time == "-");
  CHECK_THAT(s.slurm_error, Catch::Contains("is slurmctld up?"));
}

TEST_CASE("an attempt that made no job has a row of its own") {
  StatusFixture f;
  f.slurm.sbatch = FakeSlurm::Sbatch::TimesOutBeforeJob;
  CHECK_FALSE(test::user_error_of([&] { f.submit(); }).empty());
  StatusReport s = f.status();
  REQUIRE(s.rows.size() == 1);
  CHECK(s.rows[0].state == "UNCONFIRMED");
  CHECK(s.rows[0].job == "-");
}

TEST_CASE("a race shows its group row, then each job marked won or lost") {
  StatusFixture f;
  struct { Run run; } r{test::submit_race_of(test::write_race_spec(f.tmp.path), f.req.runs_root, f.req.templates_dir, f.slurm.ctx)};
  StatusReport racing = f.status();
  REQUIRE(racing.rows.size() == 3);
  CHECK(racing.rows[0].state == "RACING");
  CHECK(racing.rows[0].info == "racing: shapes 1x1, 2x1");

  std::filesystem::create_directory(race_dir(r.run) + "/claim");
  write_file_atomic(race_dir(r.run) + "/claim/winner", "101 2x1 " + std::to_string(parse_utc_iso(r.run.created_at) + 7) + "\n");
  write_file_atomic(race_dir(r.run) + "/cancelled.100", "100 " + std::to_string(parse_utc_iso(r.run.created_at) + 7) + "\n");
  f.slurm.job("100")->state = "CANCELLED";
  f.slurm.job("101")->state = "RUNNING";
  StatusReport won = f.status();
  REQUIRE(won.rows.size() == 3);
  CHECK(won.rows[0].state == "WON");
  CHECK(won.rows[0].info == "won by shape 2x1 (job 101) 7 s after submission");
  CHECK(won.rows[1].info == "lost the race: cancelled by the winner");
  CHECK(won.rows[2].info == "race winner");
}

TEST_CASE("the same rows from Slurm 24.11's JSON: states as arrays, exits as objects") {
  StatusFixture f("24.11");
  f.submit();
  f.slurm.jobs[0].state = "FAILED";
  f.slurm.jobs[0].reason = "NonZeroExitCode";
  f.slurm.jobs[0].exit = 3;
  StatusReport s = f.status();
  REQUIRE(s.rows.size() == 1);
  CHECK(s.rows[0].state == "FAILED");
  CHECK(s.rows[0].info == "exited with exit code 3");
  CHECK(s.rows[0].json["exit"]["code"] == 3);
  CHECK(s.all_done);
  SECTION("with its controller down (24.11 exits 1), rows are UNKNOWN") {
    f.slurm.controller_down = true;
    f.slurm.accounting = false;
    StatusReport down = f.status();
    CHECK(down.rows[0].state == "UNKNOWN");
    CHECK_THAT(down.slurm_error, Catch::Contains("Unable to contact slurm controller"));
  }
}

TEST_CASE("status adopts a job found by the token of an attempt recorded without one") {
  StatusFixture f;
  f.slurm.sbatch = FakeSlurm::Sbatch::TimesOutBeforeJob;
  CHECK_FALSE(test::user_error_of([&] { f.submit(); }).empty());
  Run run = f.runs().at(0);
  f.slurm.add("170", job_comment(run.attempts.at(0).token), "RUNNING", "g2");
  StatusReport s = f.status();
  REQUIRE(s.rows.size() == 1);
  CHECK(s.rows[0].job == "170");
  CHECK(s.rows[0].state == "RUNNING");
  CHECK(load_run(run.dir).attempts.at(0).outcome == Outcome::Submitted);
}
