// The in-job restart (in_job_restart.hpp): what srun and Slurm say ended a
// step, and decide_restart's choice: nodes left out, spares taken, a step
// shrunk, or the requeue or failure it falls back to. The spec's restart:
// section: tests/unit/spec/test_spec_restart.cpp; the record of what it
// decided: test_in_job_record.cpp.
#include "catch.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "fake_runner.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "agent/in_job_restart.hpp"
#include "agent/job_acts.hpp"
#include "agent/job_step_ended.hpp"
#include "runs/job_files.hpp"
#include "agent/node_check.hpp"
#include "agent/watchdog.hpp"

using namespace ddpctl;

namespace {

RestartInput two_nodes_one_spare() {
  RestartInput in;
  in.nodes = {"g1", "g2"};
  in.spares = {"g3"};
  in.max_in_job = 2;
  in.tasks_are_ranks = true;
  in.step_rc = 137;
  in.node_states = {{"g1", "MIXED"}, {"g2", "MIXED"}, {"g3", "IDLE"}};
  return in;
}

}  // namespace

TEST_CASE("srun's lines after the step's marker say which task or node ended it", "[in_job]") {
  std::vector<std::string> lines = {
      "srun: error: g9: task 3: Exited with exit code 1",  // an earlier step's
      std::string(kStepMarker) + "1 on g1 g2",
      "srun: error: g2: task 1: Killed",
      "srun: launch/slurm: _step_signal: Terminating StepId=7.2",
      "srun: error: g1: task 0: Terminated",
      "srun: error: Node failure on g4",
      "srun: error: g1: task 0: Unable to create step",
  };
  auto f = parse_step_end(lines);
  REQUIRE(f.size() == 3);
  CHECK(f[0].kind == StepFailureKind::TaskKilled);
  CHECK(f[0].node == "g2");
  CHECK(f[0].task == 1);
  CHECK(f[0].signal == 9);
  CHECK(f[1].kind == StepFailureKind::TaskKilled);
  CHECK(f[1].signal == 15);
  CHECK(f[2].kind == StepFailureKind::NodeLost);
  CHECK(f[2].node == "g4");
  auto e = parse_step_end({"srun: error: g2: tasks 2-3: Exited with exit code 7"});
  REQUIRE(e.size() == 1);
  CHECK(e[0].kind == StepFailureKind::TaskExited);
  CHECK(e[0].code == 7);
}

TEST_CASE("scontrol show node -o: each node's state, and which states cannot run a step", "[in_job]") {
  auto states = parse_node_states(
      "NodeName=g1 Arch=x86_64 CoresPerSocket=1 State=MIXED ThreadsPerCore=1\n"
      "NodeName=g2 Arch=x86_64 CoresPerSocket=1 State=DOWN*+NOT_RESPONDING ThreadsPerCore=1\n");
  CHECK(states.at("g1") == "MIXED");
  CHECK(states.at("g2") == "DOWN*+NOT_RESPONDING");
  CHECK_FALSE(node_state_unhealthy("MIXED"));
  CHECK_FALSE(node_state_unhealthy("ALLOCATED"));
  CHECK(node_state_unhealthy("DOWN*+NOT_RESPONDING"));
  CHECK(node_state_unhealthy("MIXED+DRAIN"));
  CHECK(node_state_unhealthy("ALLOCATED*"));
  CHECK(node_state_unhealthy("IDLE+FAIL"));
}

TEST_CASE("a killed rank: its node is left out and a spare takes its place", "[in_job]") {
  RestartInput in = two_nodes_one_spare();
  in.failures = parse_step_end({"srun: error: g2: task 1: Killed", "srun: error: g1: task 0: Killed"});
  RestartDecision d = decide_restart(in);
  CHECK(d.verdict == AgentVerdict::Go);
  CHECK(d.kind == StepFailureKind::TaskKilled);
  CHECK(d.nodes == std::vector<std::string>{"g1", "g3"});
  CHECK(d.spares.empty());
  CHECK(d.left_out == std::vector<std::string>{"g2"});
  CHECK(d.taken == std::vector<std::string>{"g3"});
  CHECK(d.text == "rank 1 on g2 was killed (signal 9); g2 left out, spare g3 taken");
}

TEST_CASE("without a spare, a rank's healthy node is kept, a lost one is not", "[in_job]") {
  RestartInput in = two_nodes_one_spare();
  in.spares.clear();
  in.tasks_are_ranks = false;
  in.failures = parse_step_end({"srun: error: g2: task 1: Exited with exit code 3"});
  RestartDecision d = decide_restart(in);
  CHECK(d.verdict == AgentVerdict::Go);
  CHECK(d.nodes == in.nodes);
  CHECK(d.text == "task 1 on g2 exited with exit code 3; g2 kept (no spare left)");

  in.node_states["g2"] = "DOWN*+NOT_RESPONDING";
  in.failures = parse_step_end({"srun: error: Node failure on g2"});
  RestartDecision lost = decide_restart(in);
  CHECK(lost.verdict == AgentVerdict::Fail);
  CHECK(lost.kind == StepFailureKind::NodeLost);
  CHECK(lost.text == "node g2 (Slurm: DOWN*+NOT_RESPONDING) was lost; too few healthy nodes left for 2 (1 of 2, no spare "
                     "left); no requeue: section: the job fails");
}

TEST_CASE("restart.min_nodes: without a spare the step shrinks, down to min_nodes, and no further", "[in_job]") {
  RestartInput in = two_nodes_one_spare();
  in.spares.clear();
  in.full_nodes = 2;
  in.min_nodes = 1;
  in.node_states["g2"] = "DOWN*+NOT_RESPONDING";
  in.failures = parse_step_end({"srun: error: Node failure on g2"});
  RestartDecision d = decide_restart(in);
  CHECK(d.verdict == AgentVerdict::Go);
  CHECK(d.shrunk);
  CHECK(d.nodes == std::vector<std::string>{"g1"});
  CHECK(d.text == "node g2 (Slurm: DOWN*+NOT_RESPONDING) was lost; g2 left out, no spare left: shrunk to 1 of 2 nodes "
                  "(restart.min_nodes 1)");

  // A killed rank's node is left out too when the step may shrink without it.
  RestartInput killed = two_nodes_one_spare();
  killed.spares.clear();
  killed.full_nodes = 2;
  killed.min_nodes = 1;
  killed.failures = parse_step_end({"srun: error: g2: task 1: Killed"});
  RestartDecision k = decide_restart(killed);
  CHECK(k.verdict == AgentVerdict::Go);
  CHECK(k.nodes == std::vector<std::string>{"g1"});
  CHECK(k.left_out == std::vector<std::string>{"g2"});

  // A spare keeps the full size: shrinking is for when none is left.
  RestartInput spare = two_nodes_one_spare();
  spare.full_nodes = 2;
  spare.min_nodes = 1;
  spare.failures = parse_step_end({"srun: error: g2: task 1: Killed"});
  RestartDecision sp = decide_restart(spare);
  CHECK_FALSE(sp.shrunk);
  CHECK(sp.nodes == std::vector<std::string>{"g1", "g3"});

  // The shrunk step fails again: the shape's size is still the target, and
  // below min_nodes the job falls back.
  RestartInput again;
  again.nodes = {"g1"};
  again.max_in_job = 3;
  again.restarts_done = 1;
  again.full_nodes = 2;
  again.min_nodes = 1;
  again.tasks_are_ranks = true;
  again.node_states = {{"g1", "DOWN"}};
  again.failures = parse_step_end({"srun: error: Node failure on g1"});
  RestartDecision f = decide_restart(again);
  CHECK(f.verdict == AgentVerdict::Fail);
  CHECK(f.text == "node g1 (Slurm: DOWN) was lost; too few healthy nodes left (0 of 2, no spare left, restart.min_nodes "
                  "1); no requeue: section: the job fails");
  // A healthy shrunk node whose rank exited is kept (leaving it would go below min_nodes).
  again.node_states = {{"g1", "MIXED"}};
  again.failures = parse_step_end({"srun: error: g1: task 0: Exited with exit code 1"});
  RestartDecision kept = decide_restart(again);
  CHECK(kept.verdict == AgentVerdict::Go);
  CHECK(kept.nodes == std::vector<std::string>{"g1"});
  CHECK(kept.text == "rank 0 on g1 exited with exit code 1; g1 kept (no spare left), shrunk to 1 of 2 nodes (restart.min_nodes 1)");
}

TEST_CASE("a node Slurm marks down is left out even where srun named a task, and a sick spare is not taken", "[in_job]") {
  RestartInput in = two_nodes_one_spare();
  in.spares = {"g3", "g4"};
  in.node_states["g1"] = "DOWN*";
  in.node_states["g3"] = "IDLE+DRAIN";
  in.node_states["g4"] = "IDLE";
  in.failures = parse_step_end({"srun: error: g2: task 1: Exited with exit code 1"});
  RestartDecision d = decide_restart(in);
  CHECK(d.verdict == AgentVerdict::Go);
  CHECK(d.kind == StepFailureKind::NodeLost);
  CHECK(d.failed == std::vector<std::string>{"g1"});
  CHECK(d.nodes == std::vector<std::string>{"g2", "g4"});  // rank 0 moves to g2
  CHECK(d.text == "node g1 (Slurm: DOWN*) was lost; g1 left out, spare g4 taken");
}

TEST_CASE("the node check's failed nodes are left out before any step runs", "[in_job]") {
  RestartInput in = two_nodes_one_spare();
  in.check_failed = {"g1"};
  in.step_rc = 1;
  RestartDecision d = decide_restart(in);
  CHECK(d.verdict == AgentVerdict::Go);
  CHECK(d.kind == StepFailureKind::NodeCheck);
  CHECK(d.nodes == std::vector<std::string>{"g2", "g3"});
  CHECK(d.text == "the node check failed on g1; g1 left out, spare g3 taken");
}

TEST_CASE("the bundled trainer's peers exit 75 after a rank is killed: a restart, every task exiting 75: the requeue's", "[in_job]") {
  RestartInput in = two_nodes_one_spare();
  in.step_rc = 75;  // srun's: the highest of its tasks'
  in.failures = parse_step_end({"srun: error: g2: task 1: Exited with exit code 1", "srun: error: g1: task 0: Exited with exit code 75"});
  CHECK(decide_restart(in).verdict == AgentVerdict::Go);
  in.failures = parse_step_end({"srun: error: g1: task 0: Exited with exit code 75", "srun: error: g2: task 1: Exited with exit code 75"});
  in.max_requeues = 1;
  RestartDecision d = decide_restart(in);
  CHECK(d.verdict == AgentVerdict::Requeue);
  CHECK(d.exclude.empty());
  CHECK(d.text == "the program checkpointed and stopped for a requeue (exit status 75); no in-job restart; requeueing the job");
  // The script's own requeue says why (a preemption's words), as without restart:.
  CHECK(d.stopped_for_requeue);
  in.failures = parse_step_end({"srun: error: g2: task 1: Exited with exit code 1", "srun: error: g1: task 0: Exited with exit code 75"});
  CHECK_FALSE(decide_restart(in).stopped_for_requeue);
}

TEST_CASE("a launcher that stopped for a peer (76) or a requeue (75) is not blamed, whichever task srun names first", "[in_job]") {
  RestartInput in = two_nodes_one_spare();
  in.spares.clear();
  in.min_nodes = 1;
  in.step_rc = 76;
  // Under load srun may see g1's launcher, stopped by its worker's lost
  // peer, end before g2's, whose worker was killed.
  in.failures = parse_step_end({"srun: error: g1: task 0: Exited with exit code 76",
                                "srun: error: g2: task 1: Exited with exit code 1"});
  RestartDecision d = decide_restart(in);
  CHECK(d.verdict == AgentVerdict::Go);
  CHECK(d.failed == std::vector<std::string>{"g2"});
  CHECK(d.nodes == std::vector<std::string>{"g1"});
  CHECK(d.text == "rank 1 on g2 exited with exit code 1; g2 left out, no spare left: shrunk to 1 of 2 nodes (restart.min_nodes 1)");

  in.failures = parse_step_end({"srun: error: g1: task 0: Exited with exit code 75",
                                "srun: error: g2: task 1: Exited with exit code 1"});
  CHECK(decide_restart(in).failed == std::vector<std::string>{"g2"});
  // Killed by srun (-K1) after g2 ended: still g2.
  in.failures = parse_step_end({"srun: error: g1: task 0: Exited with exit code 76", "srun: error: g2: task 1: Killed"});
  CHECK(decide_restart(in).failed == std::vector<std::string>{"g2"});
  // Only followers (no failure of its own named): the first one, as before.
  in.failures = parse_step_end({"srun: error: g2: task 1: Exited with exit code 76",
                                "srun: error: g1: task 0: Exited with exit code 76"});
  CHECK(decide_restart(in).failed == std::vector<std::string>{"g2"});
  CHECK(kPeerFailedExit == 76);  // trainer/launcher.hpp's kStoppedForPeer: the trainer shares no code with ddpctl
}

TEST_CASE("a step the watchdog ended by cancelling or requeueing the job is not restarted", "[in_job]") {
  RestartInput in = two_nodes_one_spare();
  in.failures = parse_step_end({"srun: error: g1: task 0: Killed"});
  in.watchdog_taken = WatchdogOutcome::Warned;
  CHECK(decide_restart(in).verdict == AgentVerdict::Go);
  in.watchdog_taken = WatchdogOutcome::Requeued;
  RestartDecision d = decide_restart(in);
  CHECK(d.verdict == AgentVerdict::Fail);
  CHECK(d.text == "the watchdog requeued the job; no in-job restart");
  in.watchdog_taken = WatchdogOutcome::Cancelling;
  CHECK(decide_restart(in).text == "the watchdog cancelled the job; no in-job restart");
}

TEST_CASE("restarts used up: requeue without the failed nodes while requeues remain, else fail", "[in_job]") {
  RestartInput in = two_nodes_one_spare();
  in.restarts_done = 2;
  in.failures = parse_step_end({"srun: error: g2: task 1: Killed"});
  in.max_requeues = 3;
  in.attempt = 1;
  RestartDecision d = decide_restart(in);
  CHECK(d.verdict == AgentVerdict::Requeue);
  CHECK(d.exclude == std::vector<std::string>{"g2"});
  CHECK(d.text == "rank 1 on g2 was killed (signal 9); in-job restarts used up (2 of 2); requeueing the job without g2");
  in.attempt = 3;
  RestartDecision f = decide_restart(in);
  CHECK(f.verdict == AgentVerdict::Fail);
  CHECK(f.text.find("requeue.max_restarts reached: the job fails") != std::string::npos);
  // An exit nobody explained: the restart says so, on the same nodes.
  RestartInput u = two_nodes_one_spare();
  u.step_rc = 2;
  RestartDecision same = decide_restart(u);
  CHECK(same.verdict == AgentVerdict::Go);
  CHECK(same.nodes == u.nodes);
  CHECK(same.spares == u.spares);
  CHECK(same.text == "the training step exited with status 2; same nodes");
}

TEST_CASE("watchdog.action restart: the stall's culprit node is left out like a failed task's, and slow nodes too", "[in_job]") {
  RestartInput in = two_nodes_one_spare();
  // The watchdog killed every task: srun names them all; the stall is the cause.
  in.failures = parse_step_end({"srun: error: g1: task 0: Killed", "srun: error: g2: task 1: Killed"});
  in.watchdog_stall = "stalled 20s: rank 1 (g2) is not in a collective — at hang.py:9 in f; rank 0 (g1) waits in all_reduce";
  in.watchdog_nodes = {"g2"};
  RestartDecision d = decide_restart(in);
  CHECK(d.verdict == AgentVerdict::Go);
  CHECK(d.kind == StepFailureKind::Stalled);
  CHECK(d.nodes == std::vector<std::string>{"g1", "g3"});
  CHECK(d.text == "the watchdog ended the step: stalled 20s: rank 1 (g2) is not in a collective — at hang.py:9 in f; "
                  "rank 0 (g1) waits in all_reduce; g2 left out, spare g3 taken");
  // No culprit named: nothing is left out, the same nodes start again.
  in.watchdog_nodes.clear();
  CHECK(decide_restart(in).nodes == std::vector<std::string>{"g1", "g2"});
  // Used up: requeued without the culprit's node.
  in.watchdog_nodes = {"g2"};
  in.restarts_done = 2;
  in.max_requeues = 1;
  RestartDecision back = decide_restart(in);
  CHECK(back.verdict == AgentVerdict::Requeue);
  CHECK(back.exclude == std::vector<std::string>{"g2"});

  // watchdog.exclude_slow: a task's failure on g1 and a slow g2; one spare.
  RestartInput slow = two_nodes_one_spare();
  slow.failures = parse_step_end({"srun: error: g1: task 0: Exited with exit code 1"});
  slow.slow_nodes = {"g2"};
  RestartDecision s = decide_restart(slow);
  CHECK(s.verdict == AgentVerdict::Go);
  CHECK(s.text == "rank 0 on g1 exited with exit code 1; g1 left out, spare g3 taken, g2 (slow) kept (no spare left)");
  slow.spares = {"g3", "g4"};
  slow.node_states["g4"] = "IDLE";
  CHECK(decide_restart(slow).text == "rank 0 on g1 exited with exit code 1; g1, g2 (slow) left out, spares g3, g4 taken");
}
