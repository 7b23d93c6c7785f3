// The node check before training (node_check.cpp): the GPUs through a
// scripted nvidia-smi, free memory from a fake meminfo, the rendezvous port
// over the loopback interface, the record each node writes, and what the
// batch script decides from them (go on, fail, or requeue without the bad
// nodes through scontrol).
#include <algorithm>
#include <arpa/inet.h>
#include "catch.hpp"
#include <chrono>
#include <fmt/format.h>
#include <future>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

#include "fake_runner.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "agent/master_port.hpp"
#include "agent/node_check.hpp"

using namespace ddpctl;
using test::exits;
using test::FakeClock;
using test::FakeRunner;

namespace {

const std::vector<std::string> kGpuQuery = {"nvidia-smi", "-L"};
// `nvidia-smi -L` of N whole GPUs.
std::string gpus(int n) {
  std::string out;
  for (int i = 0; i < n; i++)
    out += fmt::format("GPU {}: NVIDIA A100-SXM4-80GB (UUID: GPU-{}aa0b9e4-0000-0000-0000-000000000000)\n", i, i);
  return out;
}

// A socket bound to a free port of 127.0.0.1 and not listening: a connect
// to it is refused at once, and no other test can take the port meanwhile.
struct ClosedPort {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int port = 0;
  ClosedPort() {
    REQUIRE(fd >= 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
    socklen_t len = sizeof sa;
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) == 0);
    port = ntohs(sa.sin_port);
  }
  ~ClosedPort() { ::close(fd); }
};

NodeCheckResult result(const std::string& node, bool ok, std::vector<NodeProblem> problems = {}, double seconds = 0.4) {
  NodeCheckResult r;
  r.node = node;
  r.ok = ok;
  r.problems = std::move(problems);
  r.seconds = seconds;
  return r;
}

NodeProblem gpu_problem(const std::string& text) { return {NodeProblemKind::Gpus, text}; }

std::string meminfo(long long available_kib) {
  return fmt::format("MemTotal:       263856128 kB\nMemFree:        1000 kB\nMemAvailable:   {} kB\n", available_kib);
}

}  // namespace

TEST_CASE("check_gpus counts the GPUs nvidia-smi shows against the job's", "[node_check]") {
  FakeRunner runner;
  std::string note;

  SECTION("as many as the job was given") {
    runner.on("nvidia-smi", {}, exits(0, gpus(4)));
    CHECK_FALSE(check_gpus("g1", 4, runner, &note));
    CHECK(note == "4 GPU(s) visible");
    CHECK(runner.calls == std::vector<std::vector<std::string>>{kGpuQuery});
  }
  SECTION("fewer: the node and both counts") {
    runner.on("nvidia-smi", {}, exits(0, gpus(2) + "\n"));
    auto p = check_gpus("g2", 4, runner, &note);
    REQUIRE(p);
    CHECK(*p == "node g2 shows 2 GPU(s), the job was given 4 (gpus_per_node): a GPU is missing or has fallen off "
               "the bus (see nvidia-smi -q and dmesg on g2)");
    CHECK(note.empty());
  }
  SECTION("more: a node without device cgroups shows all of its GPUs, the job's among them") {
    runner.on("nvidia-smi", {}, exits(0, gpus(4)));
    CHECK_FALSE(check_gpus("g1", 2, runner, &note));
    CHECK(note == "4 GPU(s) visible");
  }
  SECTION("MIG: a GPU in MIG mode counts its MIG devices") {
    runner.on("nvidia-smi", {},
              exits(0, "GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-5d5ba0d6)\n"
                       "  MIG 3g.20gb     Device  0: (UUID: MIG-1a2b)\n"
                       "  MIG 3g.20gb     Device  1: (UUID: MIG-3c4d)\n"
                       "GPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-6e6ba0d6)\n"));
    CHECK_FALSE(check_gpus("g1", 3, runner, &note));
    CHECK(note == "3 GPU(s) visible");
  }
  SECTION("no nvidia-smi: not checked, no problem") {
    runner.on("nvidia-smi", {}, test::not_found());
    CHECK_FALSE(check_gpus("g1", 4, runner, &note));
    CHECK(note == "no nvidia-smi: GPUs not checked");
  }
  SECTION("nvidia-smi failing: a problem naming the node and its error") {
    runner.on("nvidia-smi", {},
              exits(9, "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\nMore.\n"));
    auto p = check_gpus("g2", 4, runner, &note);
    REQUIRE(p);
    CHECK(*p ==
          "node g2: nvidia-smi exited with status 9: NVIDIA-SMI has failed because it couldn't communicate with the "
          "NVIDIA driver.");
  }
  SECTION("nvidia-smi failing with a warning on stderr and its error on stdout: both") {
    runner.on("nvidia-smi", {}, exits(15, "Unable to determine the device handle for GPU0000:81:00.0: Unknown Error\n",
                                      "WARNING: infoROM is corrupted at gpu 0000:81:00.0\n"));
    auto p = check_gpus("g2", 4, runner, &note);
    REQUIRE(p);
    CHECK(*p ==
          "node g2: nvidia-smi exited with status 15: WARNING: infoROM is corrupted at gpu 0000:81:00.0: 'Unable to "
          "determine the device handle for GPU0000:81:00.0: Unknown Error'");
  }
  SECTION("nvidia-smi timing out") {
    runner.on("nvidia-smi", {}, test::times_out());
    auto p = check_gpus("g2", 1, runner, &note);
    REQUIRE(p);
    CHECK(*p == "node g2: nvidia-smi did not finish in time and was stopped");
  }
}

TEST_CASE("check_node: free memory from meminfo, and GPUs", "[node_check]") {
  test::TempDir proc;
  FakeRunner runner;
  FakeClock clock;
  NodeCheckOptions o;
  o.node = "g2";
  o.proc_root = proc.path;
  o.min_free_mib = 2048;

  SECTION("too little free memory names the node") {
    write_file_atomic(proc.path + "/meminfo", meminfo(1024 * 1024));
    NodeCheckResult r = check_node(o, runner, clock);
    CHECK(r.node == "g2");
    CHECK_FALSE(r.ok);
    REQUIRE(r.problems.size() == 1);
    CHECK(r.problems[0].text ==
          "node g2 has 1024 MiB of memory free, the job needs 2048 MiB there (other processes hold the rest: see `ps "
          "aux --sort=-rss` on g2)");
    CHECK(r.problems[0].kind == NodeProblemKind::Memory);
    CHECK(runner.calls.empty());  // no GPUs expected: nvidia-smi not asked
  }
  SECTION("enough: a note") {
    write_file_atomic(proc.path + "/meminfo", meminfo(4096 * 1024));
    NodeCheckResult r = check_node(o, runner, clock);
    CHECK(r.ok);
    CHECK(r.problems.empty());
    CHECK(r.notes == std::vector<std::string>{"4096 MiB free"});
    CHECK(r.seconds >= 0);
  }
  SECTION("no meminfo: not checked") {
    NodeCheckResult r = check_node(o, runner, clock);
    CHECK(r.ok);
    CHECK(r.notes == std::vector<std::string>{"free memory not checked (no meminfo)"});
  }
  SECTION("GPUs and memory both wrong: every problem") {
    write_file_atomic(proc.path + "/meminfo", meminfo(1024));
    o.expected_gpus = 2;
    runner.on("nvidia-smi", {}, exits(0, gpus(1)));
    NodeCheckResult r = check_node(o, runner, clock);
    CHECK_FALSE(r.ok);
    REQUIRE(r.problems.size() == 2);
    CHECK_THAT(r.problems[0].text, Catch::StartsWith("node g2 shows 1 GPU(s), the job was given 2 (gpus_per_node): "));
    CHECK(r.problems[0].kind == NodeProblemKind::Gpus);
    CHECK_THAT(r.problems[1].text, Catch::StartsWith("node g2 has 1 MiB of memory free"));
  }
}

TEST_CASE("the first node listens on the rendezvous port and the others reach it", "[node_check]") {
  std::promise<int> listening;
  auto port = listening.get_future();
  auto listener = std::async(std::launch::async, [&] {
    SystemClock clock;
    return listen_for_peers(0, 2, 30, clock, [&](int p) { listening.set_value(p); });
  });
  REQUIRE(port.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  int p = port.get();
  CHECK(p > 0);
  SystemClock c2, c3;
  auto g2 = std::async(std::launch::async, [&c2, p] { return reach_listener("127.0.0.1", p, "g2", 30, c2); });
  auto g3 = std::async(std::launch::async, [&c3, p] { return reach_listener("localhost", p, "g3", 30, c3); });
  CHECK(g2.get() == std::nullopt);
  CHECK(g3.get() == std::nullopt);
  ListenResult l = listener.get();
  CHECK_FALSE(l.problem);
  CHECK(l.port == p);
  std::vector<std::string> connected = l.connected;
  std::sort(connected.begin(), connected.end());
  CHECK(connected == std::vector<std::string>{"g2", "g3"});
}

TEST_CASE("a port that is taken cannot be listened on", "[node_check]") {
  // A listener holding the port: a second bind fails even with SO_REUSEADDR.
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_ANY);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
  REQUIRE(::listen(fd, 4) == 0);
  socklen_t len = sizeof sa;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) == 0);
  int port = ntohs(sa.sin_port);
  bool called = false;
  SystemClock clock;
  ListenResult l = listen_for_peers(port, 1, 5, clock, [&](int) { called = true; });
  ::close(fd);
  REQUIRE(l.problem);
  CHECK(*l.problem == fmt::format("cannot listen on port {}: Address already in use", port));
  CHECK_FALSE(called);
  CHECK(l.connected.empty());
}

TEST_CASE("reaching a port nobody listens on gives up at the deadline with why", "[node_check]") {
  ClosedPort closed;
  // The deadline on a fake clock: a retry every 0.2 s until 1 s has passed, in no time.
  FakeClock clock;
  auto why = reach_listener("127.0.0.1", closed.port, "g2", 1, clock);
  REQUIRE(why);
  CHECK(*why == "connection refused");
  CHECK(clock.sleeps == 5);
  CHECK(clock.mono == Approx(1001));

  SECTION("through check_node, the problem names both nodes and the interface") {
    test::TempDir proc;
    FakeRunner runner;
    NodeCheckOptions o;
    o.node = "g2";
    o.master_addr = "127.0.0.1";
    o.master_host = "g1";
    o.master_port = closed.port;
    o.interface = "ib0";
    o.deadline_s = 1;
    o.proc_root = proc.path;
    NodeCheckResult r = check_node(o, runner, clock);
    CHECK_FALSE(r.ok);
    REQUIRE(r.problems.size() == 1);
    CHECK(r.problems[0].kind == NodeProblemKind::CannotReach);
    CHECK(r.problems[0].text == fmt::format("node g2 cannot reach 127.0.0.1:{} over ib0 (g1, rank 0's node): connection refused",
                                       closed.port));
  }
}

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
