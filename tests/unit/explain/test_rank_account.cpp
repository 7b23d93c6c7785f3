// Each rank's share of a run's account (explain/rank_account.hpp): the
// step's allocation over its ranks, split as the run's parts are, and what
// each rank's samples show; a rank far below the median named as waiting on
// its own inputs, one far above as the one the others wait for.
#include "catch.hpp"

#include "explain/rank_account.hpp"

using namespace ddpctl;
using Catch::Matchers::Contains;

namespace {

UsageAccount two_node_account() {
  UsageAccount a;
  // 2 step nodes x 4 GPUs: 100 s training, 20 s start; a spare idle 120 s.
  a.parts = {{"training", "training", 100, 200, 1600, 800},
             {"start", "start", 20, 40, 320, 160},
             {"idle", "idle", 120, 120, 960, 480}};
  a.node_s = 360;
  return a;
}

// A sample of `node` at t with ranks [first, first+4) and their GPUs' utilisation.
UsageSample gpu_sample(const std::string& node, double t, int first, std::vector<double> util) {
  UsageSample s;
  s.node = node;
  s.t = t;
  s.cpus = 16;
  for (int i = 0; i < 4; ++i) {
    RankUsage r;
    r.rank = first + i;
    r.cpu_pct = 100;
    r.wait_pct = i == 0 ? 30 : 0;
    r.rss_bytes = (first + i + 1) * 1000;
    s.ranks.push_back(r);
    s.gpus.push_back({i, util[static_cast<size_t>(i)], 1000, 80000});
  }
  return s;
}

}  // namespace

TEST_CASE("per rank: each rank's share of the step, and its GPU's utilisation from its node's samples",
          "[usage_account]") {
  UsageAccount a = two_node_account();
  std::map<std::string, std::vector<UsageSample>> samples = {
      {"g1", {gpu_sample("g1", 10, 0, {90, 90, 90, 90}), gpu_sample("g1", 20, 0, {80, 90, 90, 90})}},
      {"g2", {gpu_sample("g2", 10, 4, {90, 30, 90, 90}), gpu_sample("g2", 20, 4, {90, 30, 90, 90})}},
  };
  account_ranks(a, samples, {8, 4, 4, {100, 100, 100, 100, 100, 100, 100, 900}});
  REQUIRE(a.ranks.size() == 8);
  // The step's 240 node-s (the idle spare's left out) over 8 ranks; its 8
  // GPUs' 960 GPU-s: one GPU a rank, for the 120 s the step held it.
  for (const auto& r : a.ranks) {
    CHECK(r.held_s == 120);
    CHECK(r.training_s == 100);
    CHECK(r.node_s == Approx(30));
    CHECK(r.gpu_s == Approx(120));
  }
  CHECK(a.ranks[0].node == "g1");
  CHECK(*a.ranks[0].busy_pct == Approx(85));
  CHECK(*a.ranks[0].cpu_wait_pct == Approx(30));
  CHECK(a.ranks[5].node == "g2");
  CHECK(*a.ranks[5].busy_pct == Approx(30));
  CHECK(a.ranks[7].rss_peak_bytes == 8000);
  CHECK(*a.ranks[7].mem_peak_mib == 900);
  REQUIRE(a.notes.size() == 1);
  CHECK_THAT(a.notes[0], Contains("rank 5 on g2: its GPU busy 30% against the ranks' median 90%: it waits on"));
  std::string words = describe_ranks(a);
  CHECK_THAT(words, Contains("per rank: 0.033 GPU-h each, 83% of it training; busy (its GPU): 0 g1 85%, 1 g1 90%"));
  CHECK_THAT(words, Contains("5 g2 30%"));
  nlohmann::json j = account_json(a);
  REQUIRE(j["ranks"].size() == 8);
  CHECK(j["ranks"][5]["busy_pct"].get<double>() == Approx(30));
  CHECK(j["ranks"][5]["node"] == "g2");
}

TEST_CASE("per rank on CPUs: a rank's processes over its share of its node's CPUs, and the one the others wait for",
          "[usage_account]") {
  UsageAccount a = two_node_account();
  for (auto& p : a.parts) p.gpu_s = 0;  // CPU nodes
  // 2 nodes x 2 ranks, 4 CPUs a node: 2 a rank. Rank 3 keeps its 2 CPUs
  // busy; the others wait for it at 40%.
  std::map<std::string, std::vector<UsageSample>> samples;
  for (int node = 0; node < 2; ++node) {
    UsageSample s;
    s.node = "c" + std::to_string(node + 1);
    s.t = 5;
    s.cpus = 4;
    for (int i = 0; i < 2; ++i) {
      RankUsage r;
      r.rank = node * 2 + i;
      r.cpu_pct = r.rank == 3 ? 190 : 80;
      s.ranks.push_back(r);
    }
    samples[s.node].push_back(s);
  }
  account_ranks(a, samples, {4, 2, 0, {}});
  REQUIRE(a.ranks.size() == 4);
  CHECK(*a.ranks[0].busy_pct == Approx(40));
  CHECK(*a.ranks[3].busy_pct == Approx(95));
  CHECK_FALSE(a.ranks[0].mem_peak_mib);
  REQUIRE(a.notes.size() == 1);
  CHECK_THAT(a.notes[0], Contains("rank 3 on c2: its CPUs busy 95% against the ranks' median 40%: the others wait for it"));
  CHECK_THAT(describe_ranks(a), Contains("per rank: 0.017 node-h each"));
}

TEST_CASE("per rank: a GPU's busy figure only where the samples list the job's GPUs", "[usage_account]") {
  UsageAccount a = two_node_account();
  // 8 GPUs listed on a node where the job has 4: which is whose is not known.
  UsageSample s = gpu_sample("g1", 10, 0, {10, 10, 10, 10});
  for (int i = 4; i < 8; ++i) s.gpus.push_back({i, 99, 1000, 80000});
  account_ranks(a, {{"g1", {s}}}, {4, 4, 4, {}});
  REQUIRE(a.ranks.size() == 4);
  CHECK_FALSE(a.ranks[0].busy_pct);
  CHECK(a.ranks[0].node == "g1");
}

TEST_CASE("per rank: nothing where no sample names a rank", "[usage_account]") {
  UsageAccount a = two_node_account();
  UsageSample s;
  s.node = "g1";
  account_ranks(a, {{"g1", {s}}}, {8, 4, 4, {}});
  CHECK(a.ranks.empty());
  CHECK(describe_ranks(a).empty());
  CHECK(account_json(a)["ranks"].empty());
}
