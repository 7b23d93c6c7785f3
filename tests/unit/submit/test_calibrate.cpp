// `ddpctl calibrate` (submit/calibrate.hpp): the figure read from rank 0's
// measurement lines, the profile edited in its own form (a flow mapping on
// one or two lines, a block mapping, a figure already there) with nothing
// else touched, and what is refused before anything is submitted.
#include "catch.hpp"

#include "base/files.hpp"
#include "fake_runner.hpp"
#include "helpers.hpp"
#include "spec/cluster.hpp"
#include "submit/calibrate.hpp"

using namespace ddpctl;

TEST_CASE("calibrate reads the busbw of the largest size from rank 0's lines, past a line cut short") {
  std::string log =
      "ddp-train: node 0 of 2: started 1 worker(s)\n"
      "{\"allreduce\":{\"bytes\":1048576,\"busbw_gbs\":0.4}}\n"
      "{\"allreduce\":{\"bytes\":16777216,\"busbw_gbs\":0.9}}\n"
      "{\"allreduce\":{\"bytes\":65536,\"busbw_gbs\":0.1}}\n"
      "{\"allreduce\":{\"bytes\":6710";
  CHECK(*busbw_of_log(log) == 0.9);
  CHECK_FALSE(busbw_of_log("ddp-train: error: rendezvous timed out\n"));
}

TEST_CASE("calibrate puts busbw_gbs in the partition's entry, in the form the profile has, and nothing else") {
  const std::string profile =
      "# the site\n"
      "name: site\n"
      "gpu_request: gres\n"
      "partitions:\n"
      "  gpu: {nodes: 8, gpus_per_node: 8}   # H100\n"
      "  gpu-old:\n"
      "    nodes: 2\n"
      "    # its fabric\n"
      "    gpus_per_node: 4\n"
      "  scav: {nodes: 4,\n"
      "         busbw_gbs: 12, max_time: \"02:00:00\"}\n"
      "  spare: {}\n"
      "modules: [cuda]\n";
  auto gpu = profile_with_busbw(profile, "gpu", 365.25);
  REQUIRE(gpu);
  CHECK(*gpu == std::string(profile).replace(profile.find("{nodes: 8"), 1, "{busbw_gbs: 365.2, "));
  auto old = profile_with_busbw(profile, "gpu-old", 48);
  REQUIRE(old);
  CHECK(old->find("  gpu-old:\n    busbw_gbs: 48\n    nodes: 2\n") != std::string::npos);
  auto scav = profile_with_busbw(profile, "scav", 9.5);
  REQUIRE(scav);
  CHECK(scav->find("         busbw_gbs: 9.5, max_time") != std::string::npos);
  CHECK(scav->size() == profile.size() + 1);  // "12" became "9.5": nothing else moved
  auto spare = profile_with_busbw(profile, "spare", 1);
  REQUIRE(spare);
  CHECK(spare->find("  spare: {busbw_gbs: 1}\n") != std::string::npos);
  for (const auto* edited : {&*gpu, &*old, &*scav, &*spare}) {
    ClusterProfile p = parse_cluster_profile("site.yaml", *edited);  // still a profile, the figures read back
    CHECK(p.partitions.size() == 4);
  }
  CHECK(*parse_cluster_profile("site.yaml", *old).find_partition("gpu-old")->busbw_gbs == 48);
  CHECK_FALSE(profile_with_busbw(profile, "nope", 1));
  CHECK_FALSE(profile_with_busbw("name: x\n", "gpu", 1));
}

TEST_CASE("calibrate refuses one node, more nodes than the partition has, and a partition the profile lacks") {
  test::TempDir dir;
  write_file_atomic(dir.path + "/site.yaml", "name: site\ngpu_request: gres\npartitions:\n  cpu: {nodes: 4}\n");
  test::FakeSlurm fake;
  Context& ctx = fake.ctx;
  test::RecordingOutput out;
  CalibrateRequest r;
  r.profile = dir.path + "/site.yaml";
  r.partition = "cpu";
  r.runs_root = dir.path + "/runs";
  r.work_dir = dir.path + "/runs/calibrate";
  r.nodes = 1;
  CHECK_THAT(test::user_error_of([&] { calibrate(r, ctx, out); }),
             Catch::Matchers::Contains("--nodes: 1: an all-reduce across nodes needs 2 nodes or more"));
  r.nodes = 8;
  CHECK_THAT(test::user_error_of([&] { calibrate(r, ctx, out); }),
             Catch::Matchers::Contains("8: partition cpu has 4 node(s)"));
  r.nodes = 2;
  r.partition = "gpu";
  CHECK_THAT(test::user_error_of([&] { calibrate(r, ctx, out); }),
             Catch::Matchers::Contains("no partition 'gpu' in this profile"));
  CHECK(fake.runner.calls.empty());  // nothing was submitted
}
