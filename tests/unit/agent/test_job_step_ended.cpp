// `ddpctl job step-ended` (agent/job_step_ended): what the batch shell asks
// after each training step, read from the batch log, Slurm's node states and
// the watchdog's record; and the newest step the watchdog ends
// (agent/job_acts). decide_restart's own cases: test_in_job_restart.cpp.
#include "catch.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "fake_runner.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "agent/in_job_restart.hpp"
#include "agent/job_agent.hpp"
#include "runs/job_files.hpp"
#include "agent/node_check.hpp"
#include "spec/spec.hpp"
#include "agent/watchdog.hpp"

using namespace ddpctl;

TEST_CASE("job step-ended reads the batch log and Slurm's node states, records before the act", "[in_job]") {
  test::TempDir dir;
  test::FakeRunner runner;
  test::FakeClock clock;
  test::FakeEnvironment env;
  env.vars["SLURM_JOB_ID"] = "7";
  env.vars["SLURM_RESTART_COUNT"] = "0";
  SlurmClient slurm{runner};
  Context ctx{runner, slurm, clock, env, 0.5};
  std::string base = dir.path + "/demo_7";
  write_file_atomic(job_files::batch_err(base), "ddpctl: job 7 (demo) attempt 1 on g[1-3]\n" + std::string(kStepMarker) +
                                                    "0 on g1 g2\nsrun: error: g2: task 1: Killed\nsrun: error: g1: task 0: Killed\n");
  // A stale check record of the spare: removed, so that a spare that cannot check is not read as passing.
  write_file_atomic(node_check_path(base, 0, "g3"), "{}");
  runner.on("scontrol", {"show", "node"},
            test::exits(0, "NodeName=g1 State=MIXED\nNodeName=g2 State=MIXED\nNodeName=g3 State=IDLE\n"));
  StepEndedOptions o;
  o.log_base = base;
  o.nodes = {"g1", "g2"};
  o.spares = {"g3"};
  o.max_in_job = 2;
  o.tasks_are_ranks = true;
  o.step_rc = 137;
  // Step 0's watchdog saw its last progress 25 s before the step ended.
  write_file_atomic(in_job_progress_path(base, 0, 0), fmt::format(R"({{"at": {}, "basis": "the progress file"}})", clock.wall() - 25));
  RestartDecision d = on_step_ended(o, ctx);
  CHECK(runner.count("scontrol", {"-o", "g1,g2,g3"}) == 1);
  CHECK(d.verdict == AgentVerdict::Go);
  CHECK(d.nodes == std::vector<std::string>{"g1", "g3"});
  CHECK_FALSE(std::filesystem::exists(node_check_path(base, 0, "g3")));
  auto rec = read_in_job_record(base, 0);
  REQUIRE(rec);
  REQUIRE(rec->restarts.size() == 1);
  CHECK(rec->restarts[0].started_at == 0);  // before the act
  CHECK(rec->restarts[0].last_progress_at == rec->restarts[0].decided_at - 25);
  on_step_started(base, 1, ctx);
  CHECK(read_in_job_record(base, 0)->restarts[0].started_at > 0);  // after it

  // The second failure, with restarts used up and no requeue: the record says the job fails.
  write_file_atomic(job_files::batch_err(base), std::string(kStepMarker) + "1 on g1 g3\nsrun: error: g3: task 1: Exited with exit code 2\n");
  o.nodes = d.nodes;
  o.spares = d.spares;
  o.restarts_done = 2;
  RestartDecision end = on_step_ended(o, ctx);
  CHECK(end.verdict == AgentVerdict::Fail);
  CHECK(read_in_job_record(base, 0)->fallback == "fail");
  CHECK(describe_in_job(*read_in_job_record(base, 0)).find("rank 1 on g3 exited with exit code 2; in-job restarts used up") !=
        std::string::npos);
}

TEST_CASE("the newest step of squeue -s is the training step the watchdog ends", "[in_job]") {
  CHECK(newest_step("5.extern\n5.batch\n5.0\n5.3\n5.12\n") == "5.12");
  CHECK(newest_step("7_3.batch\n7_3.2\n") == "7_3.2");
  CHECK(newest_step("5.batch\n") == "");
  test::FakeRunner runner;
  runner.on("squeue", {"-s", "-j", "5"}, test::exits(0, "5.batch\n5.0\n5.1\n"));
  runner.on("scancel", {"--signal=KILL", "5.1"}, test::exits(0, ""));
  std::string step;
  CHECK_FALSE(end_training_step(runner, "5", &step));
  CHECK(step == "5.1");
  CHECK(runner.count("scancel", {"--signal=KILL", "5.1"}) == 1);
  test::FakeRunner none;
  none.on("squeue", {"-s"}, test::exits(0, "5.batch\n"));
  CHECK(end_training_step(none, "5", &step).value_or("") == "squeue -s lists no step of job 5");
  // An array task: asked and ended by <array>_<index>.
  test::FakeRunner task;
  task.on("squeue", {"-j", "9_1"}, test::exits(0, "9_1.batch\n9_1.0\n"));
  task.on("scancel", {"--signal=KILL", "9_1.0"}, test::exits(0, ""));
  CHECK_FALSE(end_training_step(task, "9_1", &step));
  CHECK(step == "9_1.0");
}

TEST_CASE("job step-ended reads the watchdog's restart of this step, not an earlier step's", "[in_job]") {
  test::TempDir dir;
  test::FakeRunner runner;
  test::FakeClock clock;
  test::FakeEnvironment env;
  env.vars["SLURM_JOB_ID"] = "7";
  env.vars["SLURM_RESTART_COUNT"] = "0";
  SlurmClient slurm{runner};
  Context ctx{runner, slurm, clock, env, 0.5};
  std::string base = dir.path + "/demo_7";
  write_file_atomic(job_files::batch_err(base), std::string(kStepMarker) +
                                                    "1 on g1 g2\nsrun: error: g1: task 0: Killed\nsrun: error: g2: task 1: Killed\n");
  StallRecord r;
  r.attempt = 0;
  r.step = 1;
  r.stalled = true;
  r.for_s = 20;
  r.action = "restart";
  r.taken = WatchdogOutcome::Restarted;
  r.culprit_named = true;
  r.culprit = "rank 1 (g2) is not in a collective — at hang.py:9 in f";
  r.stopped = {{1, 1, "g2"}};
  write_file_atomic(stall_record_path(base), stall_record_json(r).dump());
  runner.on("scontrol", {"show", "node"},
            test::exits(0, "NodeName=g1 State=MIXED\nNodeName=g2 State=MIXED\nNodeName=g3 State=IDLE\n"));
  StepEndedOptions o;
  o.log_base = base;
  o.nodes = {"g1", "g2"};
  o.spares = {"g3"};
  o.max_in_job = 3;
  o.restarts_done = 1;
  o.tasks_are_ranks = true;
  o.step_rc = 137;
  RestartDecision d = on_step_ended(o, ctx);
  CHECK(d.kind == StepFailureKind::Stalled);
  CHECK(d.text == "the watchdog ended the step: stalled 20s: rank 1 (g2) is not in a collective — at hang.py:9 in f; g2 "
                  "left out, spare g3 taken");
  // The record is of step 1; step 2's failure is its own.
  o.restarts_done = 2;
  o.nodes = {"g1", "g3"};
  o.spares = {};
  write_file_atomic(job_files::batch_err(base), std::string(kStepMarker) + "2 on g1 g3\nsrun: error: g3: task 1: Killed\n");
  CHECK(on_step_ended(o, ctx).kind == StepFailureKind::TaskKilled);
}
