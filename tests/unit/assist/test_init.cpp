// `ddpctl init`'s choice of the starter spec's shape (choose_starter_shape)
// against the local test cluster's profile: what is asked, what the
// profile suggests, and what it cannot hold.
#include "catch.hpp"

#include "helpers.hpp"
#include "spec/cluster.hpp"
#include "assist/init.hpp"

using namespace ddpctl;
using ddpctl::test::user_error_of;

namespace {

ClusterProfile local_profile() {
  return load_cluster_profile(ddpctl::test::source_dir() + "/configs/clusters/local.yaml");
}

}  // namespace

TEST_CASE("init's shape: the default partition when it holds the GPUs asked, else the first partition that does") {
  ClusterProfile p = local_profile();
  InitRequest req;
  StarterShape none = choose_starter_shape(req, p);
  CHECK(none.gpus == 0);
  CHECK(none.partition.empty());  // the site's default, cpu, is not written
  REQUIRE(none.chosen);
  CHECK(none.chosen->name == "cpu");
  req.gpus = 1;
  StarterShape one = choose_starter_shape(req, p);
  CHECK(one.partition == "a100-80gb");
  CHECK(one.gpus == 1);
  req.gpus = 4;
  CHECK(choose_starter_shape(req, p).partition == "a100-80gb");
  req.gpus = 1;
  req.partition = "gpu";
  StarterShape asked = choose_starter_shape(req, p);
  CHECK(asked.partition == "gpu");
  CHECK(asked.chosen->name == "gpu");
}

TEST_CASE("init's shape: what the profile cannot hold is refused, naming the option") {
  ClusterProfile p = local_profile();
  InitRequest req;
  req.gpus = 8;
  CHECK_THAT(user_error_of([&] { choose_starter_shape(req, p); }),
             Catch::Contains("--gpus") && Catch::Contains("no partition of cluster local has 8 GPUs per node"));
  req.gpus.reset();
  req.gpu_type = "h100";
  CHECK_THAT(user_error_of([&] { choose_starter_shape(req, p); }),
             Catch::Contains("--gpu-type") && Catch::Contains("cluster local has no GPU type h100"));
  req.gpu_type.clear();
  req.nodes = 0;
  CHECK_THAT(user_error_of([&] { choose_starter_shape(req, p); }), Catch::Contains("nodes are 1 or more"));
}
