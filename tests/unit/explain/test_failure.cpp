// Why a job failed, read from the logs real jobs left on the local cluster
// (tests/unit/data/failure/, renamed job_<id>.*): which rank failed first and
// how, when srun reports a peer that only saw it go first.
#include "catch.hpp"
#include <csignal>
#include <filesystem>
#include <fstream>

#include "explain/failure.hpp"
#include "explain/requeue.hpp"
#include "helpers.hpp"

using namespace ddpctl;

namespace {

std::string data(const std::string& name) { return test::source_dir() + "/tests/unit/data/failure/" + name; }

RunShape shape_in(const std::string& dir, int nodes, int ranks_per_node) {
  RunShape s;
  s.label = "2x2";
  s.job_name = "job";
  s.output_dir = dir;
  s.nodes = nodes;
  s.ranks_per_node = ranks_per_node;
  return s;
}

Job ended(const std::string& id, JobState state, ExitStatus exit = {}) {
  Job j;
  j.id = id;
  j.state = state;
  j.exit = exit;
  j.nodes = "g[1-2]";
  return j;
}

using test::write;

}  // namespace

TEST_CASE("a torchrun exception names the raising rank, not the peer srun reported first") {
  // srun's first error line is task 0 on g1, whose ranks failed on rank 2's closed connection.
  auto f = find_failure(shape_in(data("torchrun-exception"), 2, 2), ended("21", JobState::Failed, {1, {}}), -1);
  REQUIRE(f);
  CHECK(f->rank == 2);
  CHECK(f->task == 1);
  CHECK(f->node == "g2");
  CHECK(f->exit == ExitStatus{1, std::nullopt});
  CHECK(f->line == "ValueError: bad batch on rank 2 of 4");
  CHECK(describe_failure(*f) == "rank 2 (task 1) on g2 exited with exit code 1: ValueError: bad batch on rank 2 of 4");
  auto j = failure_json(*f);
  CHECK(j["rank"] == 2);
  CHECK(j["node"] == "g2");
  CHECK(j["signal"].is_null());
}

TEST_CASE("a killed trainer worker is named by the launcher's line, with its signal") {
  auto f = find_failure(shape_in(data("rank-killed"), 2, 2), ended("17", JobState::Failed, {1, {}}), -1);
  REQUIRE(f);
  CHECK(f->rank == 3);
  CHECK(f->task == 1);
  CHECK(f->node == "g2");
  CHECK(f->exit == ExitStatus{std::nullopt, SIGKILL});
  CHECK(describe_failure(*f) ==
        "rank 3 (task 1) on g2 was killed by signal 9 (SIGKILL): ddp-train: error: rank 3 (local rank 1, pid 19675) "
        "was killed by signal 9 (Killed); stopping the other workers");
}

TEST_CASE("when every task failed only because of another, the first is named") {
  test::TempDir dir;
  write(dir.path + "/job_5.err",
        "ddpctl: job 5 (x) attempt 1 on g[1-2]\nsrun: error: g1: task 0: Exited with exit code 1\n"
        "srun: error: g2: task 1: Exited with exit code 1\n");
  write(dir.path + "/job_5.restart0.0.out", "RuntimeError: [pair.cc:598] Connection closed by peer [10.0.0.2]:1\n");
  write(dir.path + "/job_5.restart0.1.out", "RuntimeError: [pair.cc:589] Read error: Connection reset by peer\n");
  auto f = find_failure(shape_in(dir.path, 2, 1), ended("5", JobState::Failed, {1, {}}), -1);
  REQUIRE(f);
  CHECK(f->task == 0);
  CHECK(f->rank == 0);
  CHECK(f->line == "RuntimeError: [pair.cc:598] Connection closed by peer [10.0.0.2]:1");
}

TEST_CASE("a lost node is named, not the task srun stopped on the healthy one") {
  auto shape = shape_in(data("node-crash"), 2, 1);
  std::vector<NodeInfo> nodes(2);
  nodes[0].name = "g1", nodes[0].state = "IDLE";
  nodes[1].name = "g2", nodes[1].state = "DOWN+NOT_RESPONDING";
  auto f = find_failure(shape, ended("1", JobState::NodeFail), -1, nodes);
  REQUIRE(f);
  CHECK_FALSE(f->task);
  CHECK_FALSE(f->rank);
  CHECK(f->node == "g2");
  CHECK(describe_failure(*f) == "lost node g2 (it stopped responding to Slurm, which marked it down)");
  // Without the nodes' states, srun's "Node failure on g2" line still names it.
  f = find_failure(shape, ended("1", JobState::NodeFail), -1);
  REQUIRE(f);
  CHECK(describe_failure(*f) == "lost node g2 (it stopped responding to Slurm)");
}

TEST_CASE("Slurm's end states in words, with Slurm's own line") {
  test::TempDir dir;
  auto shape = shape_in(dir.path, 1, 1);
  write(dir.path + "/job_8.err",
        "ddpctl: job 8 (x) attempt 1 on g1\n"
        "slurmstepd-g1: error: *** JOB 8 ON g1 CANCELLED AT 2026-11-23T15:40:05 DUE TO TIME LIMIT ***\n"
        "srun: Job step aborted: Waiting up to 7 seconds for job step to finish.\n"
        "srun: error: g1: task 0: Terminated\n");
  write(dir.path + "/job_8.restart0.0.out", "training\n");
  auto f = find_failure(shape, ended("8", JobState::Timeout, {0, 15}), -1);
  REQUIRE(f);
  CHECK_FALSE(f->task);  // stopped by the limit, not failed
  CHECK(describe_failure(*f) ==
        "reached its time limit (not requeued): *** JOB 8 ON g1 CANCELLED AT 2026-11-23T15:40:05 DUE TO TIME LIMIT ***");

  Job cancelled = ended("9", JobState::Cancelled, {0, 15});
  cancelled.cancelled_by = "0";
  write(dir.path + "/job_9.err", "srun: error: g1: task 0: Terminated\n");
  f = find_failure(shape, cancelled, -1);
  REQUIRE(f);
  CHECK(describe_failure(*f) == "was cancelled by root");
  cancelled.cancelled_by = "";
  CHECK(describe_failure(*find_failure(shape, cancelled, -1)) == "was cancelled");

  // Under load a task outlives Slurm's SIGTERM and is killed: srun says
  // "Killed", and the task's log holds its slurmstepd's line that it ended
  // the step (the logs of a CI run, 2026-11-29). Still the cancel, no rank.
  write(dir.path + "/job_13.err",
        "ddpctl: job 13 (x) attempt 1 on g[1-2]\n"
        "srun: Job step aborted: Waiting up to 7 seconds for job step to finish.\n"
        "slurmstepd-g1: error: *** JOB 13 ON g1 CANCELLED AT 2026-11-29T04:15:36 ***\n"
        "srun: forcing job termination\n"
        "srun: got SIGCONT\n"
        "srun: error: g2: task 1: Terminated\n"
        "srun: Terminating StepId=13.1\n"
        "srun: error: g1: task 0: Killed\n");
  write(dir.path + "/job_13.restart0.0.out", "slurmstepd-g1: error: *** STEP 13.1 ON g1 CANCELLED AT 2026-11-29T04:15:36 ***\ntraining\n");
  write(dir.path + "/job_13.restart0.1.out", "training\n");
  Job killed = ended("13", JobState::Cancelled, {0, 9});
  killed.cancelled_by = "0";
  f = find_failure(shape_in(dir.path, 2, 1), killed, -1);
  REQUIRE(f);
  CHECK_FALSE(f->task);
  CHECK_FALSE(f->rank);
  CHECK(describe_failure(*f) == "was cancelled by root");
  // ... and a task killed after Slurm's line that it cancelled the job,
  // whose own log has no slurmstepd line (only the batch host's says so).
  write(dir.path + "/job_13.err",
        "ddpctl: job 13 (x) attempt 1 on g[1-2]\n"
        "slurmstepd-g1: error: *** JOB 13 ON g1 CANCELLED AT 2026-11-29T04:15:36 ***\n"
        "srun: forcing job termination\n"
        "srun: error: g2: task 1: Killed\n"
        "srun: error: g1: task 0: Killed\n");
  f = find_failure(shape_in(dir.path, 2, 1), killed, -1);
  REQUIRE(f);
  CHECK_FALSE(f->task);
  CHECK(describe_failure(*f) == "was cancelled by root");
  // A task that failed on its own before the cancel is still named.
  write(dir.path + "/job_13.restart0.0.out", "training\nRuntimeError: CUDA error: an illegal memory access\n");
  write(dir.path + "/job_13.err",
        "ddpctl: job 13 (x) attempt 1 on g[1-2]\n"
        "srun: error: g1: task 0: Exited with exit code 1\n"
        "slurmstepd-g1: error: *** JOB 13 ON g1 CANCELLED AT 2026-11-29T04:15:36 ***\n"
        "srun: error: g2: task 1: Killed\n");
  f = find_failure(shape_in(dir.path, 2, 1), killed, -1);
  REQUIRE(f);
  CHECK(f->rank == 0);

  CHECK(describe_failure(*find_failure(shape, ended("10", JobState::OutOfMemory), -1)) == "ran out of memory");
  CHECK(describe_failure(*find_failure(shape, ended("11", JobState::Preempted), -1)) == "was preempted");
  CHECK_FALSE(find_failure(shape, ended("12", JobState::Completed), -1));
  CHECK_FALSE(find_failure(shape, ended("12", JobState::Running), -1));
}

TEST_CASE("a program that cannot start: the shell's words, the exit code decoded") {
  test::TempDir dir;
  write(dir.path + "/job_3.err",
        "ddpctl: job 3 (x) attempt 1 on g1\nsrun: error: g1: task 0: Exited with exit code 127\n");
  write(dir.path + "/job_3.restart0.0.out", "ddpctl-task: line 1: train-my-model: command not found\n");
  auto f = find_failure(shape_in(dir.path, 1, 1), ended("3", JobState::Failed, {127, {}}), -1);
  REQUIRE(f);
  CHECK(describe_failure(*f) ==
        "rank 0 on g1 exited with exit code 127: ddpctl-task: line 1: train-my-model: command not found");
}

TEST_CASE("requeues say which attempt and why") {
  test::TempDir dir;
  RunShape shape = shape_in(dir.path, 1, 1);
  shape.max_requeues = 2;
  Job job = ended("4", JobState::Pending);
  job.requeues = 1;
  write(dir.path + "/job_4.err", "ddpctl: job 4 (x) attempt 1 on g1\nddpctl: requeueing job 4 (restart 1 of 2)\n");
  auto r = find_requeue(shape, job);
  REQUIRE(r);
  CHECK(r->describe() == "attempt 2 of 3 (requeued at the time limit)");

  // Not requeued by ddpctl's script: how sacct says the earlier attempt ended.
  write(dir.path + "/job_4.err",
        "ddpctl: job 4 (x) attempt 1 on g[1-2]\nsrun: error: Node failure on g2\nddpctl: job 4 (x) attempt 2 on g[1,3]\n");
  shape.max_requeues = 0;
  r = find_requeue(shape, job, [] { return std::vector<Job>{ended("4", JobState::NodeFail)}; });
  REQUIRE(r);
  CHECK(r->describe() == "attempt 2 (requeued after NODE_FAIL of g2)");
  write(dir.path + "/job_4.err", "");
  r = find_requeue(shape, job, [] { return std::vector<Job>{ended("4", JobState::Cancelled)}; });
  CHECK(r->describe() == "attempt 2 (requeued by scontrol requeue)");
  // slurmdbd has not written the earlier attempt yet: requeued, why unknown.
  r = find_requeue(shape, job, [] { return std::vector<Job>{}; });
  CHECK(r->describe() == "attempt 2 (requeued; sacct has no record of the earlier attempt yet)");
  job.requeues = 0;
  CHECK_FALSE(find_requeue(shape, job));
}


TEST_CASE("long lines and huge numbers in the logs crash nothing (std::regex recursed per character)") {
  // Each line is one the explanation reads whole: srun's error line, a
  // Python exception, a container runtime's FATAL, the launcher's line,
  // torchrun's root cause. At 300,000 characters each overflowed the stack.
  test::TempDir dir;
  std::string long_words(300000, 'x');
  write(dir.path + "/job_6.err",
        "ddpctl: job 6 (x) attempt 1 on g[1-2]\n"
        "srun: error: g2: task 1: Exited with exit code 1 " + long_words + "\n"
        "srun: error: g1: task 99999999999: Exited with exit code 1\n");
  write(dir.path + "/job_6.restart0.1.out",
        "Traceback (most recent call last):\n  File \"t.py\", line 1, in <module>\n"
        "ValueError: " + long_words + "\n"
        "FATAL: " + long_words + "\n"
        "ddp-train: error: rank 3 (local rank 1, pid 7) exited with status 99999999999\n"
        "Root Cause (first observed failure):\n  rank      : 99999999999\n  exitcode  : 12345678901234\n");
  auto f = find_failure(shape_in(dir.path, 2, 1), ended("6", JobState::Failed, {1, {}}), -1);
  REQUIRE(f);
  CHECK(f->task == 1);
  CHECK(f->node == "g2");
  CHECK(f->line.rfind("FATAL: xxx", 0) == 0);  // the container runtime's line says most
  CHECK(f->exit == ExitStatus{1, std::nullopt});  // the out-of-range numbers were not read
  // srun's lost node, named by a word as long as the line.
  write(dir.path + "/job_6.err", "srun: error: Node failure on g" + long_words + "\n");
  f = find_failure(shape_in(dir.path, 2, 1), ended("6", JobState::NodeFail), -1);
  REQUIRE(f);
  CHECK(f->node.size() == 300001);
}
