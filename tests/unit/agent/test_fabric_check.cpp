// The fabric check (fabric_check.cpp): the verdict from the measurements
// (levels, the bisection's node or link, what is excluded), and the check
// run through a scripted srun: once when healthy, the pairs after a
// whole-set figure below the failure level, its record read back by the
// node check's verdict (job checked) and by the in-job restart's spares.
#include "catch.hpp"

#include <fmt/format.h>

#include "fake_runner.hpp"
#include "helpers.hpp"
#include "agent/fabric_check.hpp"
#include "agent/job_check.hpp"
#include "base/files.hpp"
#include "runs/job_files.hpp"

using namespace ddpctl;
using test::exits;

namespace {

FabricRecord record(std::vector<std::string> nodes, std::optional<double> whole) {
  FabricRecord r;
  r.nodes = std::move(nodes);
  r.expected_gbs = 10;
  r.warn_below = 0.8;
  r.fail_below = 0.5;
  r.bytes = 64 << 20;
  r.measures.push_back({1, r.nodes, whole, 0.01});
  return r;
}

void pair(FabricRecord& r, int round, const std::string& a, const std::string& b, double gbs) {
  r.measures.push_back({round, {a, b}, gbs, 0.01});
  r.rounds = std::max(r.rounds, round);
}

// ddp-train's lines for 4 nodes, g3 slow with everyone (or only g1-g2's link).
std::string whole_line(double gbs) {
  return fmt::format(R"({{"allreduce":{{"bytes":8388608,"ranks":4,"busbw_gbs":{},"seconds":0.02}}}})", gbs) + "\n";
}
std::string pair_line(int round, int a, int b, double gbs) {
  return fmt::format(R"({{"allreduce_pair":{{"round":{},"nodes":[{},{}],"hosts":["g{}","g{}.cluster"],"busbw_gbs":{},"seconds":0.01}}}})",
                     round, a, b, a + 1, b + 1, gbs) +
         "\n";
}

}  // namespace

TEST_CASE("the fabric check's levels: at the expected figure, below the warning level, not measured",
          "[fabric_check]") {
  FabricRecord ok = record({"g1", "g2"}, 9.5);
  decide_fabric(ok);
  CHECK(ok.level == FabricLevel::Ok);
  CHECK(ok.exclude.empty());
  CHECK(ok.text.find("2 nodes: 9.5 GB/s bus bandwidth at 64 MiB (95% of the expected 10 GB/s)") == 0);

  FabricRecord warn = record({"g1", "g2"}, 6);
  decide_fabric(warn);
  CHECK(warn.level == FabricLevel::Warn);
  CHECK(warn.exclude.empty());
  CHECK(warn.text.find("below the warning level (80%); training goes on") != std::string::npos);

  FabricRecord broken = record({"g1", "g2"}, std::nullopt);
  broken.problem = "srun: error: ddp-train: not found";
  decide_fabric(broken);
  CHECK(broken.level == FabricLevel::Unmeasured);
  CHECK(broken.text.find("not measured (srun: error: ddp-train: not found): the fabric is not checked") !=
        std::string::npos);

  FabricRecord slow = record({"g1", "g2"}, std::nullopt);
  slow.problem = "the all-reduce did not finish within 60 s";
  decide_fabric(slow);
  CHECK(slow.level == FabricLevel::Fail);
}

TEST_CASE("the fabric check's bisection names the node slow with every partner, or the link", "[fabric_check]") {
  SECTION("a node: g3 slow with g4 and with g1") {
    FabricRecord r = record({"g1", "g2", "g3", "g4"}, 1);
    pair(r, 2, "g1", "g2", 9);
    pair(r, 2, "g3", "g4", 1);
    pair(r, 3, "g1", "g3", 1);
    pair(r, 3, "g2", "g4", 9);
    decide_fabric(r);
    CHECK(r.level == FabricLevel::Fail);
    CHECK(r.bad_nodes == std::vector<std::string>{"g3"});
    CHECK(r.bad_links.empty());
    CHECK(r.exclude == std::vector<std::string>{"g3"});
    CHECK(r.text.find("node g3 is slow with every partner (g4 1, g1 1 GB/s); excluding g3; 3 round(s)") !=
          std::string::npos);
  }
  SECTION("a link: g1-g2 slow, each fine with another") {
    FabricRecord r = record({"g1", "g2", "g3", "g4"}, 2);
    pair(r, 2, "g1", "g2", 1);
    pair(r, 2, "g3", "g4", 9);
    pair(r, 3, "g1", "g3", 9);
    pair(r, 3, "g2", "g4", 9);
    decide_fabric(r);
    CHECK(r.bad_nodes.empty());
    CHECK(r.bad_links == std::vector<std::pair<std::string, std::string>>{{"g1", "g2"}});
    CHECK(r.exclude == std::vector<std::string>{"g2"});
    CHECK(r.text.find("the link between g1 and g2 is slow while each is fine with another") != std::string::npos);
  }
  SECTION("3 nodes: g2's one pair slow, its partner fine with g3") {
    FabricRecord r = record({"g1", "g2", "g3"}, 1);
    pair(r, 2, "g1", "g2", 1);
    pair(r, 3, "g1", "g3", 9);
    decide_fabric(r);
    CHECK(r.exclude == std::vector<std::string>{"g2"});
  }
  SECTION("every pair slow: the fabric, not a node; nothing excluded") {
    FabricRecord r = record({"g1", "g2", "g3", "g4"}, 1);
    pair(r, 2, "g1", "g2", 1);
    pair(r, 2, "g3", "g4", 1);
    pair(r, 3, "g1", "g3", 1);
    pair(r, 3, "g2", "g4", 1);
    decide_fabric(r);
    CHECK(r.level == FabricLevel::Fail);
    CHECK(r.exclude.empty());
    CHECK(r.text.find("4 of 4 nodes are slow with every partner: the fabric as a whole, not one node") !=
          std::string::npos);
  }
  SECTION("2 nodes: a slow node is not told from a slow link") {
    FabricRecord r = record({"g1", "g2"}, 1);
    pair(r, 2, "g1", "g2", 1);
    decide_fabric(r);
    CHECK(r.exclude.empty());
    CHECK(r.text.find("with 2 nodes a slow node cannot be told from a slow link; training goes on") !=
          std::string::npos);
  }
}

TEST_CASE("ddp-train's lines: the largest size's whole-set figure, each pair's hosts as the job's nodes",
          "[fabric_check]") {
  std::vector<std::string> nodes = {"g1", "g2", "g3", "g4"};
  auto whole = parse_fabric_lines("ddp-train: rendezvous\n" + whole_line(3) + whole_line(7) + "{\"allreduce\":", nodes,
                                  false);
  REQUIRE(whole.size() == 1);
  CHECK(*whole[0].busbw_gbs == 7);
  CHECK(whole[0].nodes == nodes);
  auto pairs = parse_fabric_lines(pair_line(1, 0, 1, 9) + pair_line(2, 1, 3, 2), nodes, true);
  REQUIRE(pairs.size() == 2);
  CHECK(pairs[0].round == 2);
  CHECK(pairs[1].nodes == std::vector<std::string>{"g2", "g4"});  // "g4.cluster" is g4
}

TEST_CASE("the fabric check through srun: once when healthy, bisected, recorded and excluded when slow",
          "[fabric_check]") {
  test::TempDir dir;
  test::FakeRunner runner;
  test::FakeClock clock;
  test::FakeEnvironment env;
  env.vars = {{"SLURM_JOB_ID", "42"}, {"SLURM_RESTART_COUNT", "0"}, {"SLURMD_NODENAME", "g1"}};
  SlurmClient slurm{runner};
  Context ctx{runner, slurm, clock, env, 0.5};
  FabricCheckRequest q;
  q.log_base = dir.path + "/job_42";
  q.nodes = {"g1", "g2", "g3", "g4"};
  q.master_addr = "10.0.0.11";
  q.master_port = 29500;
  q.expected_gbs = 10;
  q.size = "8M";
  q.trainer = "/opt/ddpctl/bin/ddp-train";

  SECTION("healthy: one srun, no pairs") {
    runner.on("srun", {}, exits(0, whole_line(9.2)));
    auto said = fabric_check_once(q, ctx);
    REQUIRE(said);
    CHECK(said->find("4 nodes: 9.2 GB/s") == 0);
    REQUIRE(runner.calls.size() == 1);
    const auto& argv = runner.calls[0];
    CHECK(argv[0] == "env");
    for (const char* w : {"MASTER_ADDR=10.0.0.11", "MASTER_PORT=29500", "--nodelist=g1,g2,g3,g4", "--ntasks=4",
                          "/opt/ddpctl/bin/ddp-train", "8M", "cpu"})
      CHECK(std::find(argv.begin(), argv.end(), w) != argv.end());
    CHECK(std::find(argv.begin(), argv.end(), "--allreduce-pairs") == argv.end());
    // Once an attempt: an in-job restart's step reads the record.
    CHECK_FALSE(fabric_check_once(q, ctx));
    CHECK(runner.calls.size() == 1);
    CHECK(read_node_checks(q.log_base, {"g1", "g2"}, 1, ctx).ok);
  }
  SECTION("g3 slow: the pairs name it; the node check's verdict excludes it; it is no spare") {
    runner.on("srun", {}, exits(0, whole_line(1.1)));
    runner.on("srun", {"--allreduce-pairs"},
              exits(0, pair_line(1, 0, 1, 9) + pair_line(1, 2, 3, 0.9) + pair_line(2, 0, 2, 1) + pair_line(2, 1, 3, 9)));
    FabricRecord r = run_fabric_check(q, ctx);
    CHECK(runner.count("srun") == 2);
    CHECK(r.rounds == 3);
    CHECK(r.exclude == std::vector<std::string>{"g3"});
    auto back = read_fabric_record(q.log_base, 0);
    REQUIRE(back);
    CHECK(back->exclude == r.exclude);
    CHECK(back->measures.size() == 5);
    CheckDecision d = read_node_checks(q.log_base, {"g1", "g2", "g3", "g4"}, 1, ctx);
    CHECK_FALSE(d.ok);
    CHECK(d.bad_nodes == std::vector<std::string>{"g3"});
    CHECK(d.requeue);
    REQUIRE_FALSE(d.lines.empty());
    CHECK(d.lines[0].find("node g3: the fabric check: 4 nodes: 1.1 GB/s") == 0);
  }
  SECTION("the whole set past its time: the pairs still run, bounded by their rounds") {
    runner.on("srun", {}, test::times_out());
    runner.on("srun", {"--allreduce-pairs"},
              exits(0, pair_line(1, 0, 1, 9) + pair_line(1, 2, 3, 0.1) + pair_line(2, 0, 2, 0.1) + pair_line(2, 1, 3, 9)));
    FabricRecord r = run_fabric_check(q, ctx);
    CHECK(r.level == FabricLevel::Fail);
    CHECK(r.problem == "the all-reduce did not finish within 60 s");
    CHECK(r.exclude == std::vector<std::string>{"g3"});
  }
  SECTION("a node whose check failed goes first: no fabric check") {
    write_file_atomic(job_files::node_check(q.log_base, 0, "g2"), R"({"node": "g2", "ok": false})");
    auto said = fabric_check_once(q, ctx);
    REQUIRE(said);
    CHECK(*said == "not run: the node check failed on g2");
    CHECK(runner.calls.empty());
  }
}
