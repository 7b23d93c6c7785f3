// After the node check (node_check.cpp): the record each node writes, and
// what the batch script decides from them (go on, fail, or requeue without the
// bad nodes through scontrol).
#include "catch.hpp"

#include "fake_runner.hpp"
#include "helpers.hpp"
#include "agent/node_check.hpp"

using namespace ddpctl;
using test::exits;
using test::FakeRunner;

namespace {

NodeCheckResult result(const std::string& node, bool ok, std::vector<NodeProblem> problems = {}, double seconds = 0.4) {
  NodeCheckResult r;
  r.node = node;
  r.ok = ok;
  r.problems = std::move(problems);
  r.seconds = seconds;
  return r;
}

NodeProblem gpu_problem(const std::string& text) { return {NodeProblemKind::Gpus, text}; }

}  // namespace

TEST_CASE("a node's check result survives its file", "[node_check]") {
  CHECK(node_check_path("logs/job_42", 1, "g2") == "logs/job_42.restart1.check.g2.json");
  NodeCheckResult r = result("g2", false, {gpu_problem("node g2 shows 1 GPU(s), the job was given 2 (gpus_per_node)")}, 1.23456);
  r.notes = {"4096 MiB free"};
  auto back = parse_node_check(node_check_json(r).dump());
  REQUIRE(back);
  CHECK(back->node == "g2");
  CHECK_FALSE(back->ok);
  CHECK(back->problems == r.problems);
  CHECK(back->notes == r.notes);
  CHECK(back->seconds == Approx(1.23));

  CHECK(parse_node_check(node_check_json(result("g1", true)).dump())->ok);
  CHECK_FALSE(parse_node_check(""));
  CHECK_FALSE(parse_node_check(R"({"node": "g1", "ok": tr)"));
  CHECK_FALSE(parse_node_check(R"({"ok": true})"));
  CHECK_FALSE(parse_node_check("[]"));

  SECTION("an older record's problems, plain strings, have no kind") {
    auto old = parse_node_check(R"({"node": "g2", "ok": false, "problems": ["node g2 has 1 MiB of memory free"]})");
    REQUIRE(old);
    CHECK(old->problems == std::vector<NodeProblem>{{NodeProblemKind::Other, "node g2 has 1 MiB of memory free"}});
  }
}

TEST_CASE("after the check: go on, requeue without the bad nodes, or fail", "[node_check]") {
  std::vector<std::string> nodes = {"g1", "g2", "g3"};
  const NodeProblem bad = gpu_problem("node g2 shows 1 GPU(s), the job was given 2 (gpus_per_node)");

  SECTION("every node ready") {
    CheckDecision d = decide_after_check(nodes, {result("g1", true), result("g2", true, {}, 1.31), result("g3", true)},
                                         0, 2);
    CHECK(d.ok);
    CHECK_FALSE(d.requeue);
    CHECK(d.bad_nodes.empty());
    CHECK(d.lines == std::vector<std::string>{"3 node(s) ready in 1.3 s"});
    CHECK(check_verdict(d) == AgentVerdict::Go);
  }
  SECTION("one bad node with restarts left: requeue without it") {
    CheckDecision d = decide_after_check(nodes, {result("g1", true), result("g2", false, {bad}), result("g3", true)},
                                         0, 2);
    CHECK_FALSE(d.ok);
    CHECK(d.requeue);
    CHECK(d.bad_nodes == std::vector<std::string>{"g2"});
    CHECK(d.lines == std::vector<std::string>{bad.text});
    CHECK(check_verdict(d) == AgentVerdict::Requeue);
  }
  SECTION("every node bad: the job is at fault, not the nodes") {
    CheckDecision d = decide_after_check(
        nodes, {result("g1", false, {gpu_problem("a")}), result("g2", false, {gpu_problem("b")}),
                result("g3", false, {gpu_problem("c")})},
        0, 2);
    CHECK_FALSE(d.ok);
    CHECK_FALSE(d.requeue);
    CHECK(d.bad_nodes == nodes);
    CHECK(d.lines == std::vector<std::string>{"a", "b", "c"});
    CHECK(check_verdict(d) == AgentVerdict::Fail);
  }
  SECTION("no restart left") {
    CheckDecision d = decide_after_check(nodes, {result("g1", true), result("g2", false, {bad}), result("g3", true)},
                                         2, 2);
    CHECK_FALSE(d.ok);
    CHECK_FALSE(d.requeue);
    CHECK(d.bad_nodes == std::vector<std::string>{"g2"});
  }
  SECTION("a node that wrote no result is not checked, and the job goes on") {
    CheckDecision d = decide_after_check(nodes, {result("g1", true), std::nullopt, result("g3", true)}, 0, 2);
    CHECK(d.ok);
    CHECK_FALSE(d.requeue);
    CHECK(d.lines == std::vector<std::string>{
                         "2 node(s) ready in 0.4 s",
                         "not checked: g2 (they wrote no result: ddpctl could not run there?)"});
  }
  SECTION("a one-node job on a bad node is requeued without it") {
    CheckDecision d = decide_after_check({"g2"}, {result("g2", false, {bad})}, 0, 1);
    CHECK(d.requeue);
    CHECK(d.bad_nodes == std::vector<std::string>{"g2"});
  }
  SECTION("fewer results than nodes: the rest not checked") {
    CheckDecision d = decide_after_check(nodes, {result("g1", true)}, 0, 2);
    CHECK(d.ok);
    CHECK(d.lines.back() == "not checked: g2, g3 (they wrote no result: ddpctl could not run there?)");
  }
}

TEST_CASE("after the check: the first node that no other reaches, or that cannot listen, is the one left out",
          "[node_check]") {
  std::vector<std::string> nodes = {"g1", "g2", "g3"};

  SECTION("no other node reaches the first: the first one is excluded") {
    auto unreachable = [](const std::string& n) {
      return result(n, false, {{NodeProblemKind::CannotReach,
                                "node " + n + " cannot reach 10.0.0.1:20001 over ib0 (g1, rank 0's node): connection timed out after 10s"}});
    };
    CheckDecision d = decide_after_check(nodes, {result("g1", true), unreachable("g2"), unreachable("g3")}, 0, 2);
    CHECK_FALSE(d.ok);
    CHECK(d.requeue);
    CHECK(d.bad_nodes == std::vector<std::string>{"g1"});
    CHECK(d.lines.back() == "no node could reach g1: it is g1 that does not accept connections");
  }
  SECTION("the first node could not listen: it is excluded, not the nodes that could not reach it") {
    auto unreachable = [](const std::string& n) {
      return result(n, false, {{NodeProblemKind::CannotReach,
                                "node " + n + " cannot reach 10.0.0.1:20001 over ib0 (g1, rank 0's node): connection refused"}});
    };
    CheckDecision d = decide_after_check(
        nodes,
        {result("g1", false, {{NodeProblemKind::CannotListen,
                                "node g1 (rank 0's) cannot listen on port 20001: Address already in use: the rendezvous would fail"}}),
         unreachable("g2"), unreachable("g3")},
        0, 2);
    CHECK(d.requeue);
    CHECK(d.bad_nodes == std::vector<std::string>{"g1"});
    CHECK(d.lines.size() == 1);
  }
  SECTION("by the problems' kinds, not their words") {
    // Worded unlike check_node's messages: text matching would miss both.
    auto lost = [](const std::string& n) {
      return result(n, false, {{NodeProblemKind::CannotReach, "node " + n + ": no route to the first node"}});
    };
    CheckDecision d = decide_after_check(
        nodes, {result("g1", false, {{NodeProblemKind::CannotListen, "node g1: port 20001 is held by another process"}}),
                lost("g2"), lost("g3")},
        0, 2);
    CHECK(d.requeue);
    CHECK(d.bad_nodes == std::vector<std::string>{"g1"});
    CHECK(d.lines == std::vector<std::string>{"node g1: port 20001 is held by another process"});
    // ... and without the listener's problem: every other node unable to reach it.
    d = decide_after_check(nodes, {result("g1", true), lost("g2"), lost("g3")}, 0, 2);
    CHECK(d.bad_nodes == std::vector<std::string>{"g1"});
    // Problems of another kind on those nodes are theirs.
    d = decide_after_check(nodes, {result("g1", true), lost("g2"), result("g3", false, {gpu_problem("node g3: a GPU is gone")})}, 0, 2);
    CHECK(d.bad_nodes == std::vector<std::string>{"g2", "g3"});
  }
}

TEST_CASE("exclude_nodes adds to the job's ExcNodeList through scontrol", "[node_check]") {
  FakeRunner runner;
  using Calls = std::vector<std::vector<std::string>>;

  SECTION("to the nodes already excluded, once each") {
    runner.on("scontrol", {"show", "job"},
              exits(0, "JobId=42 JobName=train UserId=lusu(1000) ReqNodeList=(null) ExcNodeList=g[3-4] NodeList=g[1-2] "
                       "BatchHost=g1\n"));
    runner.on("scontrol", {"update"}, exits(0));
    CHECK_FALSE(exclude_nodes(runner, "42", {"g1", "g3"}));
    CHECK(runner.calls == Calls{{"scontrol", "show", "job", "-o", "42"},
                                {"scontrol", "update", "JobId=42", "ExcNodeList=g3,g4,g1"}});
  }
  SECTION("none excluded yet") {
    runner.on("scontrol", {"show", "job"}, exits(0, "JobId=42 ReqNodeList=(null) ExcNodeList=(null) NodeList=g1\n"));
    runner.on("scontrol", {"update"}, exits(0));
    CHECK_FALSE(exclude_nodes(runner, "42", {"g2"}));
    CHECK(runner.calls.back() == std::vector<std::string>{"scontrol", "update", "JobId=42", "ExcNodeList=g2"});
  }
  SECTION("the job cannot be shown: nothing updated") {
    runner.on("scontrol", {"show", "job"}, exits(1, "", "slurm_load_jobs error: Invalid job id specified\n"));
    auto why = exclude_nodes(runner, "42", {"g2"});
    REQUIRE(why);
    CHECK(*why == "scontrol exited with status 1: slurm_load_jobs error: Invalid job id specified");
    CHECK(runner.count("scontrol", {"update"}) == 0);
  }
  SECTION("the update refused") {
    runner.on("scontrol", {"show", "job"}, exits(0, "JobId=42 ExcNodeList=(null)\n"));
    runner.on("scontrol", {"update"}, exits(1, "", "scontrol: error: Job is no longer pending execution\n"));
    auto why = exclude_nodes(runner, "42", {"g2"});
    REQUIRE(why);
    CHECK(*why == "scontrol exited with status 1: scontrol: error: Job is no longer pending execution");
  }
}
