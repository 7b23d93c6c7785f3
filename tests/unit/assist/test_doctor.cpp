// `ddpctl doctor`'s probe (doctor.hpp's diagnose_site) over the fake Slurm,
// whose sinfo, scontrol and squeue answer with each version's real
// documents: what it reports, how status will ask for its jobs, and the
// profile it drafts. What each version really prints stays in the Slurm
// test doctor_drafts_a_usable_profile.
#include "catch.hpp"

#include "assist/doctor.hpp"
#include "fake_runner.hpp"
#include "base/text.hpp"

using namespace ddpctl;
using test::exits;

namespace {

struct Doctor {
  test::FakeSlurm slurm;
  explicit Doctor(const std::string& version) : slurm(version) {
    slurm.runner.on("sinfo", {"--version"}, exits(0, "slurm " + version + ".5\n"));
    slurm.runner.on("sinfo", {"-o", "%P|%l|%L"}, exits(0, "cpu*|1:00:00|10:00\ngpu|2-00:00:00|n/a\n"
                                                          "a100-80gb|infinite|n/a\n"));
  }
  SiteReport run(const std::string& name = "site") {
    return diagnose_site(slurm.slurm, name, "2026-11-28T09:00:00Z");
  }
};

const DoctorCheck& check_named(const SiteReport& r, const std::string& what) {
  for (const auto& c : r.checks)
    if (c.what == what) return c;
  FAIL("no check named " << what);
  throw;
}

}  // namespace

TEST_CASE("doctor drafts a profile: partitions from the nodes, the default partition and its times") {
  Doctor d("24.11");
  SiteReport r = d.run();
  CHECK(r.fatal.empty());
  CHECK(check_named(r, "Slurm version").detail == "24.11.5");
  CHECK(check_named(r, "sacct (accounting)").ok);
  CHECK(check_named(r, "MinJobAge").detail == "300");
  CHECK_THAT(check_named(r, "nodes").detail, Catch::Contains("6 nodes, read from"));
  CHECK(check_named(r, "partition a100-80gb").detail == "2 nodes, 4 CPUs, 4 GPUs (a100), features a100,a100-80gb");
  CHECK_THAT(r.profile_yaml, Catch::Contains("# Cluster profile drafted by `ddpctl doctor` from Slurm 24.11.5 on "
                                             "2026-11-28T09:00:00Z.\n"));
  CHECK_THAT(r.profile_yaml, Catch::Contains("\nname: site\n"));
  CHECK_THAT(r.profile_yaml, Catch::Contains("\ndefault_partition: cpu\ndefault_time: \"10:00\"\n"));
  CHECK_THAT(r.profile_yaml,
             Catch::Contains("  a100-80gb: {nodes: 2, gpus_per_node: 4, gpu_types: [a100], cpus_per_node: 4, "
                             "mem_per_node: 2048M}\n"));
  CHECK_THAT(r.profile_yaml, Catch::Contains("  gpu: {nodes: 4, gpus_per_node: 1, gpu_types: [a100], cpus_per_node: 2, "
                                             "mem_per_node: 2048M, max_time: \"2-00:00:00\"}\n"));
  SECTION("without --name, Slurm's ClusterName") { CHECK_THAT(d.run("").profile_yaml, Catch::Contains("\nname: local\n")); }
}

TEST_CASE("doctor says how status will ask for its jobs: by id in --json where Slurm filters, else squeue -o") {
  SECTION("fewer than two jobs queued: it cannot tell yet") {
    Doctor d("24.11");
    CHECK(check_named(d.run(), "status asks for its jobs with").detail ==
          "squeue --json --jobs=ID,... (whether this Slurm filters --json shows once two jobs are queued)");
  }
  SECTION("24.11 filters --json by --jobs") {
    Doctor d("24.11");
    d.slurm.add("7"), d.slurm.add("8");
    CHECK(check_named(d.run(), "status asks for its jobs with").detail ==
          "squeue --json --jobs=ID,... (Slurm filters: the cost follows your runs, not the queue)");
  }
  SECTION("22.05's --json lists every job whatever it is asked") {
    Doctor d("22.05");
    d.slurm.add("7"), d.slurm.add("8");
    CHECK(check_named(d.run(), "status asks for its jobs with").detail ==
          "squeue -o --jobs=ID,... (this Slurm's --json lists every job whatever it is asked)");
  }
}

TEST_CASE("doctor without Slurm's commands stops at once, and without accounting says what squeue remembers") {
  Doctor d("24.11");
  SECTION("sinfo --version fails: no profile, and the reason") {
    // A handler: a second canned answer to the same rule would come second.
    d.slurm.runner.on("sinfo", {"--version"}, [](const std::vector<std::string>&) { return test::not_found(); });
    SiteReport r = d.run();
    CHECK_FALSE(check_named(r, "Slurm version").ok);
    CHECK_THAT(r.fatal, Catch::StartsWith("Slurm's commands do not work here (") &&
                            Catch::EndsWith("); is this a login node?"));
    CHECK(r.profile_yaml.empty());
    CHECK(r.checks.size() == 1);
  }
  SECTION("accounting off") {
    d.slurm.accounting = false;
    SiteReport r = d.run();
    CHECK_FALSE(check_named(r, "sacct (accounting)").ok);
    CHECK_THAT(check_named(r, "sacct (accounting)").detail, Catch::StartsWith("unavailable ("));
    CHECK(check_named(r, "MinJobAge").detail == "300 (how long squeue remembers ended jobs)");
  }
  SECTION("the controller down: squeue --json is not read, status falls back to squeue -o") {
    d.slurm.controller_down = true;
    const DoctorCheck& c = check_named(d.run(), "squeue --json");
    CHECK_FALSE(c.ok);
  }
}

TEST_CASE("doctor's partitions: the smallest node of each, the GPU types of any, sinfo's times and default") {
  auto node = [](const std::string& name, std::vector<std::string> partitions, int cpus, long long mem,
                 std::map<std::string, int> gpus, std::vector<std::string> features = {}) {
    NodeInfo n;
    n.name = name;
    n.partitions = std::move(partitions);
    n.cpus = cpus;
    n.memory_mib = mem;
    n.gpus_by_type = std::move(gpus);
    n.features = std::move(features);
    return n;
  };
  std::vector<NodeInfo> nodes = {node("g1", {"gpu", "all"}, 8, 4096, {{"a100", 4}}, {"ib"}),
                                 node("g2", {"gpu", "all"}, 4, 8192, {{"h100", 2}}),
                                 node("c1", {"all"}, 16, 2048, {})};
  auto parts = partition_facts(nodes, "all*|1:00:00|10:00\ngpu|2-00:00:00|n/a\nnone|1:00|1:00\nbroken line\n");
  REQUIRE(parts.size() == 2);
  const PartitionFacts& gpu = parts.at("gpu");
  CHECK(gpu.nodes == 2);
  CHECK(gpu.min_cpus == 4);
  CHECK(gpu.min_mem == 4096);
  CHECK(gpu.min_gpus == 2);
  CHECK(gpu.gpu_types == std::set<std::string>{"a100", "h100"});
  CHECK(gpu.features == std::set<std::string>{"ib"});
  CHECK(gpu.max_time == "2-00:00:00");
  CHECK(gpu.default_time.empty());
  CHECK_FALSE(gpu.is_default);
  const PartitionFacts& all = parts.at("all");
  CHECK(all.nodes == 3);
  CHECK(all.min_gpus == 0);
  CHECK(all.is_default);
  CHECK(all.max_time == "1:00:00");
  CHECK(all.default_time == "10:00");
}
