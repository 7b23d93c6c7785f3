// The node check before training (node_check.cpp): the GPUs through a
// scripted nvidia-smi, free memory from a fake meminfo, and the rendezvous
// port over the loopback interface. The record each node writes and what the
// batch script decides from them: test_node_check_decision.cpp.
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
