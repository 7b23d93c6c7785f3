// The ledger as the run store keeps it (runs.hpp's load_run): every attempt
// recorded before and after sbatch, read back exactly, updated
// read-modify-write under its lock.
#include "catch.hpp"
#include <filesystem>

#include "base/files.hpp"
#include "helpers.hpp"
#include "runs/ledger.hpp"
#include "runs/run_store.hpp"

using namespace ddpctl;
namespace fs = std::filesystem;

namespace {
using test::TempDir;
}  // namespace

TEST_CASE("ledger records survive a reload exactly") {
  TempDir t;
  Run run = test::make_local_cpu_run(t.path);
  Attempt a;
  a.token = new_token();
  a.shape = "2x2";
  a.argv = {"sbatch", "--parsable", "--comment=ddpctl:" + a.token, "x y"};
  a.intent_at = utc_now_iso();
  run.attempts.push_back(a);
  save_ledger(run);
  Run mid = load_run(run.dir);
  REQUIRE(mid.attempts.size() == 1);
  CHECK(mid.attempts[0].outcome == Outcome::Intent);
  CHECK_FALSE(mid.attempts[0].settled());
  run.attempts[0].outcome = Outcome::Submitted;
  run.attempts[0].job_id = "77";
  save_ledger(run);
  Run back = load_run(run.dir);
  CHECK(back.attempts[0].argv == a.argv);
  CHECK(back.attempts[0].job_id == "77");
  CHECK(back.latest_job()->job_id == "77");
}

TEST_CASE("ledger updates are read-modify-write: writers holding stale copies lose nothing") {
  TempDir t;
  Run created = test::make_local_cpu_run(t.path);
  Run a = load_run(created.dir), b = load_run(created.dir);  // two ddpctls, each with its own copy
  Attempt x;
  x.token = "xxxxxxxxxxxx";
  update_ledger(a, [&](std::vector<Attempt>& all) { attempt_by_token(all, x.token) = x; });
  Attempt y;
  y.token = "yyyyyyyyyyyy";
  update_ledger(b, [&](std::vector<Attempt>& all) { attempt_by_token(all, y.token) = y; });
  CHECK(b.attempts.size() == 2);  // b's copy was refreshed, not written over a
  update_ledger(a, [&](std::vector<Attempt>& all) { attempt_by_token(all, x.token).outcome = Outcome::Absent; });
  Run back = load_run(created.dir);
  REQUIRE(back.attempts.size() == 2);
  CHECK(back.attempts[0].token == x.token);
  CHECK(back.attempts[0].outcome == Outcome::Absent);
  CHECK(back.attempts[1].token == y.token);
  CHECK(identity_lock_path("runs", "abc") == "runs/.locks/abc.lock");
}

TEST_CASE("a job's end is recorded once, read back whole, and never replaced") {
  TempDir t;
  Run run = test::make_local_cpu_run(t.path);
  update_ledger(run, [](std::vector<Attempt>& all) {
    Attempt& a = attempt_by_token(all, "aaaaaaaaaaaa");
    a.outcome = Outcome::Submitted;
    a.job_id = "77";
  });
  JobEnd end;
  end.job.id = "77";
  end.job.state = JobState::NodeFail;
  end.job.flags = {"REQUEUED"};
  end.job.nodes = "g[1-2]";
  end.job.start_time = 100;
  end.job.end_time = 200;
  end.job.exit.signal = 9;
  end.job.cancelled_by = "1000";
  end.job.requeues = 1;
  Job earlier;
  earlier.id = "77";
  earlier.state = JobState::Preempted;
  end.earlier = {earlier};
  NodeInfo g2;
  g2.name = "g2";
  g2.state = "down*";
  end.nodes = {g2};
  end.recorded_at = 300;
  CHECK(record_job_ends(run, {{"77", end}, {"78", end}}) == 1);  // 78 is no job of this run
  Run back = load_run(run.dir);
  REQUIRE(back.attempts.at(0).end.has_value());
  const JobEnd& e = *back.attempts[0].end;
  CHECK(e.job.state == JobState::NodeFail);
  CHECK(e.job.flags == std::vector<std::string>{"REQUEUED"});
  CHECK(e.job.nodes == "g[1-2]");
  CHECK(e.job.start_time == 100);
  CHECK(e.job.end_time == 200);
  CHECK_FALSE(e.job.exit.code.has_value());
  CHECK(e.job.exit.signal == 9);
  CHECK(e.job.cancelled_by == "1000");
  CHECK(e.job.requeues == 1);
  REQUIRE(e.earlier.size() == 1);
  CHECK(e.earlier[0].state == JobState::Preempted);
  REQUIRE(e.nodes.size() == 1);
  CHECK(e.nodes[0].state == "down*");
  CHECK(e.recorded_at == 300);
  // A second reading of the end changes nothing.
  JobEnd other = end;
  other.job.state = JobState::Completed;
  CHECK(record_job_ends(back, {{"77", other}}) == 0);
  CHECK(load_run(run.dir).attempts.at(0).end->job.state == JobState::NodeFail);
  // Later updates of the attempt keep it.
  update_ledger(back, [](std::vector<Attempt>& all) { all.at(0).cancel_requested_at = "x"; });
  CHECK(load_run(run.dir).attempts.at(0).end.has_value());
}

TEST_CASE("an array's records keep their task, pending list and throttle in the ledger", "[job_array]") {
  TempDir t;
  Run run = test::make_local_cpu_run(t.path);
  update_ledger(run, [](std::vector<Attempt>& all) {
    Attempt& a = attempt_by_token(all, "aaaaaaaaaaaa");
    a.outcome = Outcome::Submitted;
    a.job_id = "77";
  });
  JobEnd end;
  // The last task to start runs as the array's own record: id 77, task 3.
  end.job.id = "77";
  end.job.state = JobState::Completed;
  end.job.array_job_id = "77";
  end.job.array_task_id = 3;
  end.job.array_max_tasks = 2;
  Job cancelled;  // the collapsed rest of an earlier attempt, cancelled while pending
  cancelled.id = "77";
  cancelled.state = JobState::Cancelled;
  cancelled.array_job_id = "77";
  cancelled.array_tasks = "4-19%2";
  cancelled.array_max_tasks = 2;
  end.earlier = {cancelled};
  CHECK(record_job_ends(run, {{"77", end}}) == 1);
  const JobEnd& e = *load_run(run.dir).attempts.at(0).end;
  CHECK(e.job.array_job_id == "77");
  CHECK(e.job.array_task_id == 3);
  CHECK(e.job.array_tasks.empty());
  CHECK(e.job.array_max_tasks == 2);
  REQUIRE(e.earlier.size() == 1);
  CHECK_FALSE(e.earlier[0].array_task_id);
  CHECK(e.earlier[0].array_tasks == "4-19%2");
  CHECK(e.earlier[0].array_max_tasks == 2);
}

TEST_CASE("an end the ledger cannot read is no end: Slurm is asked again") {
  TempDir t;
  Run run = test::make_local_cpu_run(t.path);
  std::string ledger = R"({"format": 1, "run": "x", "attempts": [
    {"token": "a", "outcome": "submitted", "job_id": "5", "end": {"job": {"id": "5", "state": "SOMETHING_NEW"}}},
    {"token": "b", "outcome": "submitted", "job_id": "6", "end": {"job": {"id": "7", "state": "COMPLETED"}}},
    {"token": "c", "outcome": "submitted", "job_id": "8", "end": {"job": {"id": "8", "state": "COMPLETED", "exit": "?"}}},
    {"token": "d", "outcome": "submitted", "job_id": "9", "end": "garbage"}]})";
  write_file_atomic(run.dir + "/ledger.json", ledger);
  Run back = load_run(run.dir);
  REQUIRE(back.attempts.size() == 4);
  CHECK_FALSE(back.attempts[0].end.has_value());  // a state this version does not know
  CHECK_FALSE(back.attempts[1].end.has_value());  // another job's
  CHECK(back.attempts[2].end.has_value());        // an unreadable exit is no exit
  CHECK_FALSE(back.attempts[3].end.has_value());
}
