// A profile's preemption contract (docs/profiles.md "Preemption"): what
// `ddpctl doctor` writes (`preemption:`, a partition's or a QOS's
// `preemptible:`) is read back, and a mistake in it is named with its line.
#include "catch.hpp"

#include "helpers.hpp"
#include "spec/cluster.hpp"

using namespace ddpctl;

TEST_CASE("a profile's preemption contract, as doctor drafts it, is read back") {
  ClusterProfile p = parse_cluster_profile(
      "clusters/site.yaml",
      "name: site\n"
      "gpu_request: gres\n"
      "partitions:\n"
      "  cpu: {nodes: 4, gpus_per_node: 0}\n"
      "  scavenger: {nodes: 4, gpus_per_node: 0, preemptible: {mode: requeue, grace_time: 30, by: [urgent]}}\n"
      "  lab: {nodes: 2, preemptible: true}\n"
      "preemption: {type: preempt/partition_prio, exempt_time: 300, user_signal: false}\n"
      "qos:\n"
      "  low: {preemptible: {mode: cancel, grace_time: 0, exempt_time: 600, by: [high]}}\n"
      "  normal: {}\n");
  REQUIRE(p.find_partition("scavenger"));
  const auto& s = *p.find_partition("scavenger")->preemptible;
  CHECK(s.mode == "requeue");
  CHECK(s.grace_s == 30);
  CHECK(s.by == std::vector<std::string>{"urgent"});
  CHECK_FALSE(p.find_partition("cpu")->preemptible);
  // `true`: preemptible, how not said.
  REQUIRE(p.find_partition("lab")->preemptible);
  CHECK(p.find_partition("lab")->preemptible->mode.empty());
  REQUIRE(p.preemption);
  CHECK(p.preemption->type == "preempt/partition_prio");
  CHECK(p.preemption->exempt_s == 300);
  CHECK(p.preemption->user_signal == false);
  REQUIRE(p.find_qos("low"));
  CHECK(p.find_qos("low")->preemptible->mode == "cancel");
  CHECK(p.find_qos("low")->preemptible->exempt_s == 600);
  CHECK_FALSE(p.find_qos("normal")->preemptible);
}

TEST_CASE("a profile's preemption contract: a mode Slurm has not, or an unknown key, is named with its line") {
  std::string err = test::user_error_of([] {
    parse_cluster_profile("clusters/x.yaml",
                          "name: x\n"
                          "partitions:\n"
                          "  scavenger: {preemptible: {mode: kill, grace: 30}}\n"
                          "preemption: {type: preempt/fifo}\n");
  });
  CHECK_THAT(err, Catch::Matchers::Contains("clusters/x.yaml:3:") &&
                      Catch::Matchers::Contains("is one of requeue, cancel, suspend") &&
                      Catch::Matchers::Contains("grace") &&
                      Catch::Matchers::Contains("clusters/x.yaml:4:") &&
                      Catch::Matchers::Contains("Slurm's PreemptType"));
}
