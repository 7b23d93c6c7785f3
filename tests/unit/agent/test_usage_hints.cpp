// The watchdog's hints over the job's usage samples (watchdog.hpp's
// usage_hints, what the guides' troubleshooting reads): input-bound, memory
// rising towards the job's limit, a GPU's memory near full, each over a long
// enough window. The stall decision: test_watchdog.cpp.
#include "catch.hpp"
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "agent/usage_hints.hpp"
#include "runs/usage.hpp"

using namespace ddpctl;

namespace {

UsageSample usage(const std::string& node, double t, int cpus, std::optional<double> cpu_pct,
                  std::vector<GpuUsage> gpus = {}, long long rss = 0) {
  UsageSample s;
  s.node = node;
  s.t = t;
  s.cpus = cpus;
  s.cpu_pct = cpu_pct;
  s.gpus = std::move(gpus);
  s.rss_bytes = rss;
  return s;
}

using test::kGiB;

}  // namespace

TEST_CASE("usage hints: input-bound, over a long enough window", "[watchdog]") {
  std::map<std::string, std::vector<UsageSample>> samples;
  auto over = [](std::vector<double> times, double gpu_util, double cpu_pct) {
    std::vector<UsageSample> v;
    for (double t : times) v.push_back(usage("g1", t, 8, cpu_pct, {{0, gpu_util, 20000, 81920}}));
    return v;
  };
  samples["g1"] = over({820, 880, 940, 1000}, 30, 780);
  std::vector<Hint> h = usage_hints(samples, 1000);
  REQUIRE(h.size() == 1);
  CHECK(h[0].kind == "input-bound");
  CHECK(h[0].node == "g1");
  CHECK(h[0].text ==
        "input-bound on g1: GPUs 30% busy while the job's 8 CPUs are saturated (780%) for 3m00s; raise `workers` "
        "(data loader processes) or the CPUs per task");

  SECTION("too few samples") {
    samples["g1"] = over({940, 1000}, 30, 780);
    CHECK(usage_hints(samples, 1000).empty());
  }
  SECTION("a window too short: a passing dip is no news") {
    samples["g1"] = over({960, 980, 1000}, 30, 780);
    CHECK(usage_hints(samples, 1000).empty());
  }
  SECTION("samples older than the window") {
    samples["g1"] = over({500, 560, 620, 680}, 30, 780);
    CHECK(usage_hints(samples, 1000).empty());
  }
  SECTION("busy GPUs") {
    samples["g1"] = over({820, 880, 940, 1000}, 95, 780);
    CHECK(usage_hints(samples, 1000).empty());
  }
  SECTION("CPUs not saturated") {
    samples["g1"] = over({820, 880, 940, 1000}, 30, 300);
    CHECK(usage_hints(samples, 1000).empty());
  }
  SECTION("no GPU figures") {
    for (auto& s : samples["g1"]) s.gpus.clear();
    CHECK(usage_hints(samples, 1000).empty());
  }
}

TEST_CASE("usage hints: memory rising towards the job's limit", "[watchdog]") {
  std::map<std::string, std::vector<UsageSample>> samples;
  std::vector<UsageSample> v;
  long long rss[] = {12 * kGiB, 12 * kGiB + 2 * kGiB / 3, 12 * kGiB + 4 * kGiB / 3, 14 * kGiB};
  for (int i = 0; i < 4; i++) {
    v.push_back(usage("g2", 820 + 60 * i, 8, 100, {}, rss[i]));
    v.back().mem_limit_bytes = 16 * kGiB;
    v.back().mem_total_bytes = 512 * kGiB;
  }
  samples["g2"] = v;
  std::vector<Hint> h = usage_hints(samples, 1000);
  REQUIRE(h.size() == 1);
  CHECK(h[0].kind == "memory");
  CHECK(h[0].node == "g2");
  CHECK(h[0].text ==
        "memory on g2: 14.0 GiB of 16.0 GiB (the job's limit) and rising 683 MiB/min: the limit is reached in "
        "~3m00s; an OOM kill ends the job there");

  SECTION("high but steady") {
    for (auto& s : samples["g2"]) s.rss_bytes = 14 * kGiB;
    h = usage_hints(samples, 1000);
    REQUIRE(h.size() == 1);
    CHECK(h[0].text == "memory on g2: 14.0 GiB of 16.0 GiB (the job's limit); an OOM kill ends the job there");
  }
  SECTION("no limit: the node's memory") {
    for (auto& s : samples["g2"]) s.mem_limit_bytes = 0, s.mem_total_bytes = 16 * kGiB;
    h = usage_hints(samples, 1000);
    REQUIRE(h.size() == 1);
    CHECK_THAT(h[0].text, Catch::StartsWith("memory on g2: 14.0 GiB of 16.0 GiB (the node's memory) and rising"));
  }
  SECTION("well below the limit") {
    for (auto& s : samples["g2"]) s.mem_limit_bytes = 64 * kGiB;
    CHECK(usage_hints(samples, 1000).empty());
  }
  SECTION("a window too short") {
    samples["g2"].erase(samples["g2"].begin(), samples["g2"].begin() + 2);
    CHECK(usage_hints(samples, 1000).empty());
  }
}

TEST_CASE("usage hints: a GPU's memory near full", "[watchdog]") {
  std::map<std::string, std::vector<UsageSample>> samples;
  for (double t : {820, 880, 940, 1000})
    samples["g1"].push_back(usage("g1", t, 8, 200, {{0, 90, 79000, 81920}, {1, 90, 40000, 81920}}));
  std::vector<Hint> h = usage_hints(samples, 1000);
  REQUIRE(h.size() == 1);
  CHECK(h[0].kind == "gpu-memory");
  CHECK(h[0].node == "g1");
  CHECK(h[0].text == "GPU 0 on g1: 77.1 of 80.0 GiB used; a larger batch runs out of memory");

  samples["g1"].back().gpus[0].mem_used_mib = 70000;  // only the latest sample counts
  CHECK(usage_hints(samples, 1000).empty());
}
