// What a running job uses (usage.cpp): the samples files and what status and
// report make of them.
#include "catch.hpp"
#include <filesystem>
#include <fmt/format.h>
#include <fstream>

#include "base/files.hpp"
#include "helpers.hpp"
#include "base/text.hpp"
#include "runs/usage.hpp"

using namespace ddpctl;

namespace {

using test::kGiB;
constexpr long long kMiB = 1024LL * 1024;

UsageSample sample(const std::string& node, double t, int attempt = 0) {
  UsageSample s;
  s.node = node;
  s.job_id = "42";
  s.t = t;
  s.attempt = attempt;
  return s;
}

GpuUsage gpu(int index, double util, double used_mib, double total_mib = 81920) {
  return {index, util, used_mib, total_mib};
}

}  // namespace

TEST_CASE("a sample survives its JSON line, and a torn line is no sample", "[usage]") {
  UsageSample s = sample("g1", 1795300000.125, 2);
  s.interval_s = 5;
  s.cpus = 16;
  s.cpu_pct = 390.5;
  s.rss_bytes = 13 * kGiB;
  s.procs = 9;
  RankUsage r;
  r.rank = 0;
  r.cpu_s = 812.5;
  r.cpu_pct = 99.5;
  r.wait_pct = 12.5;
  r.rss_bytes = 3 * kGiB;
  r.procs = 5;
  r.states = "RSSSS";
  s.ranks.push_back(r);
  RankUsage t;
  t.task = 1;  // a node's launcher: a task, no rank
  s.ranks.push_back(t);
  s.gpus = {gpu(0, 97, 62464), gpu(1, 0, 0)};
  s.gpu_note = "";
  s.mem_total_bytes = 512 * kGiB;
  s.mem_available_bytes = 400 * kGiB;
  s.mem_limit_bytes = 64 * kGiB;

  std::string line = usage_sample_json(s).dump();
  auto back = parse_usage_sample(line);
  REQUIRE(back);
  CHECK(back->t == Approx(1795300000.125));
  CHECK(back->node == "g1");
  CHECK(back->job_id == "42");
  CHECK(back->attempt == 2);
  CHECK(back->interval_s == 5);
  CHECK(back->cpus == 16);
  CHECK(back->cpu_pct == Approx(390.5));
  CHECK(back->rss_bytes == 13 * kGiB);
  CHECK(back->procs == 9);
  REQUIRE(back->ranks.size() == 2);
  CHECK(back->ranks[0].rank == 0);
  CHECK_FALSE(back->ranks[0].task);
  CHECK(back->ranks[0].cpu_s == 812.5);
  CHECK(back->ranks[0].cpu_pct == 99.5);
  CHECK(back->ranks[0].wait_pct == 12.5);
  CHECK(back->ranks[0].rss_bytes == 3 * kGiB);
  CHECK(back->ranks[0].procs == 5);
  CHECK(back->ranks[0].states == "RSSSS");
  CHECK_FALSE(back->ranks[1].rank);
  CHECK(back->ranks[1].task == 1);
  CHECK_FALSE(back->ranks[1].cpu_pct);
  CHECK_FALSE(back->ranks[1].wait_pct);
  REQUIRE(back->gpus.size() == 2);
  CHECK(back->gpus[0].index == 0);
  CHECK(back->gpus[0].util_pct == 97);
  CHECK(back->gpus[0].mem_used_mib == 62464);
  CHECK(back->gpus[0].mem_total_mib == 81920);
  CHECK(back->gpu_note.empty());
  CHECK_FALSE(usage_sample_json(s).contains("gpu_note"));
  CHECK(back->mem_total_bytes == 512 * kGiB);
  CHECK(back->mem_available_bytes == 400 * kGiB);
  CHECK(back->mem_limit_bytes == 64 * kGiB);

  s.cpu_pct.reset();
  s.gpu_note = "no nvidia-smi on g1";
  back = parse_usage_sample(usage_sample_json(s).dump());
  REQUIRE(back);
  CHECK_FALSE(back->cpu_pct);
  CHECK(back->gpu_note == "no nvidia-smi on g1");

  CHECK_FALSE(parse_usage_sample(line.substr(0, line.size() / 2)));
  CHECK_FALSE(parse_usage_sample(""));
  CHECK_FALSE(parse_usage_sample("[1, 2]"));
  CHECK_FALSE(parse_usage_sample(R"({"node": "g1"})"));
}

TEST_CASE("read_usage gathers every node's samples file, of one attempt when asked", "[usage]") {
  test::TempDir tmp;
  std::string base = tmp.path + "/job_42";
  CHECK(usage_path(base, "g1") == tmp.path + "/job_42.usage.g1.jsonl");
  auto line = [](const UsageSample& s) { return usage_sample_json(s).dump() + "\n"; };
  // Out of time order (two samplers of one node across a requeue), and a torn last line.
  write_file_atomic(usage_path(base, "g1"), line(sample("g1", 1010)) + line(sample("g1", 1000)) +
                                                line(sample("g1", 2000, 1)) + line(sample("g1", 2005, 1)) +
                                                R"({"t": 2010, "node": "g1", "att)");
  write_file_atomic(usage_path(base, "g2"), line(sample("g2", 1001)) + line(sample("g2", 2001, 1)));
  // Another job's whose name starts alike, and a file that is not a samples file.
  write_file_atomic(tmp.path + "/job_421.usage.g1.jsonl", line(sample("g9", 1000)));
  write_file_atomic(tmp.path + "/job_42.usage.g1.jsonl.tmp", line(sample("g8", 1000)));

  auto all = read_usage(base);
  REQUIRE(all.size() == 2);
  REQUIRE(all["g1"].size() == 4);
  CHECK(all["g1"][0].t == 1000);
  CHECK(all["g1"][1].t == 1010);
  CHECK(all["g1"][3].t == 2005);
  CHECK(all["g2"].size() == 2);

  auto second = read_usage(base, 1);
  REQUIRE(second.size() == 2);
  CHECK(second["g1"].size() == 2);
  CHECK(second["g1"][0].t == 2000);
  REQUIRE(second["g2"].size() == 1);
  CHECK(second["g2"][0].t == 2001);

  CHECK(read_usage(base, 2).empty());
  CHECK(read_usage(tmp.path + "/missing/job_1").empty());
}

TEST_CASE("read_usage with tail_bytes reads only the samples in each file's tail", "[usage]") {
  test::TempDir tmp;
  std::string base = tmp.path + "/job_42";
  // Lines of one length, so that a tail can end on a line's start or inside one.
  std::vector<std::string> lines;
  for (int i = 0; i < 5; i++) lines.push_back(usage_sample_json(sample("g1", 1000 + i)).dump() + "\n");
  const long long n = static_cast<long long>(lines[0].size());
  for (const auto& l : lines) REQUIRE(static_cast<long long>(l.size()) == n);
  std::string text;
  for (const auto& l : lines) text += l;
  write_file_atomic(usage_path(base, "g1"), text);
  auto times = [&](long long tail) {
    std::vector<double> t;
    auto samples = read_usage(base, -1, tail);
    for (const auto& s : samples["g1"]) t.push_back(s.t);
    return t;
  };
  CHECK(times(0) == std::vector<double>{1000, 1001, 1002, 1003, 1004});
  CHECK(times(10 * n) == std::vector<double>{1000, 1001, 1002, 1003, 1004});
  CHECK(times(5 * n) == std::vector<double>{1000, 1001, 1002, 1003, 1004});
  CHECK(times(2 * n + 5) == std::vector<double>{1003, 1004});  // the cut line is left out
  CHECK(times(2 * n) == std::vector<double>{1003, 1004});      // a tail that starts on a line keeps it
  CHECK(times(2 * n - 1) == std::vector<double>{1004});
}

TEST_CASE("usage_now sums each node's latest sample into one line for status", "[usage]") {
  std::map<std::string, std::vector<UsageSample>> samples;
  UsageSample old = sample("g1", 990);
  old.cpu_pct = 10;
  UsageSample g1 = sample("g1", 1000);
  g1.cpu_pct = 190;
  g1.cpus = 8;
  g1.rss_bytes = 6 * kGiB;
  g1.gpus = {gpu(0, 97, 62464)};
  UsageSample g2 = sample("g2", 998);
  g2.cpu_pct = 200;
  g2.cpus = 8;
  g2.rss_bytes = 6 * kGiB + 100 * kMiB;
  g2.gpus = {gpu(0, 95, 61440)};
  samples["g1"] = {old, g1};
  samples["g2"] = {g2};
  samples["g3"] = {};  // a sampler that wrote nothing yet

  auto u = usage_now(samples);
  REQUIRE(u);
  CHECK(u->t == 998);  // the oldest of the latest
  CHECK(u->cpu_pct == Approx(390));
  CHECK(u->cpus == 16);
  CHECK(u->rss_bytes == 12 * kGiB + 100 * kMiB);
  CHECK(u->gpus == 2);
  CHECK(u->gpu_util_pct == Approx(96));
  CHECK(u->gpu_mem_used_mib == 62464 + 61440);
  CHECK(u->gpu_mem_total_mib == 2 * 81920);
  CHECK(u->nodes.size() == 2);
  // The job's GPUs together: their mean utilisation, their memory summed.
  CHECK(format_usage(*u) == "GPU 96% 121/160 GiB · CPU 390% RSS 12.1 GiB");

  auto j = usage_json(*u, 1010.4);
  CHECK(j["age_s"] == 12);
  CHECK(j["total"]["gpus"] == 2);
  CHECK(j["nodes"]["g2"]["node"] == "g2");

  SECTION("one GPU") {
    samples.erase("g2");
    CHECK(format_usage(*usage_now(samples)) == "GPU 97% 61/80 GiB · CPU 190% RSS 6.0 GiB");
  }
  SECTION("no GPU, and no CPU figure yet at the first sample") {
    UsageNow cpu_only;
    cpu_only.rss_bytes = 312 * kMiB;
    CHECK(format_usage(cpu_only) == "RSS 312 MiB");
  }
  SECTION("nothing sampled") {
    std::map<std::string, std::vector<UsageSample>> empty;
    CHECK_FALSE(usage_now(empty));
    empty["g1"] = {};
    CHECK_FALSE(usage_now(empty));
  }
}

TEST_CASE("summarize_usage gives a whole job's GPU, CPU and memory figures", "[usage]") {
  auto with = [](UsageSample s, std::optional<double> cpu, GpuUsage g, long long rss) {
    s.cpu_pct = cpu;
    s.gpus = {g};
    s.rss_bytes = rss;
    return s;
  };
  std::map<std::string, std::vector<UsageSample>> samples;
  samples["g1"] = {with(sample("g1", 1000), std::nullopt, gpu(0, 80, 1000), 1 * kGiB),
                   with(sample("g1", 1005), 200, gpu(0, 90, 2000), 3 * kGiB),
                   with(sample("g1", 1010), 400, gpu(0, 100, 2000), 2 * kGiB)};
  samples["g2"] = {with(sample("g2", 1000), 100, gpu(0, 50, 1000), 4 * kGiB),
                   with(sample("g2", 1005), 300, gpu(0, 60, 3000), 1 * kGiB)};
  UsageSummary s = summarize_usage(samples);
  CHECK(s.samples == 5);
  CHECK(s.gpu_util_mean == Approx(76));
  CHECK(s.gpu_mem_peak_mib == Approx(3000));
  CHECK(s.gpu_mem_mean_mib == Approx(1800));
  CHECK(s.gpu_mem_mode_mib == Approx(2000));  // 1000 and 2000 twice each: the larger
  CHECK(s.cpu_pct_mean == Approx(300 + 200));  // each node's mean, summed
  CHECK(s.rss_peak_bytes == 4 * kGiB);

  UsageSummary none = summarize_usage({});
  CHECK(none.samples == 0);
  CHECK_FALSE(none.gpu_util_mean);
  CHECK_FALSE(none.gpu_mem_mode_mib);
  CHECK_FALSE(none.cpu_pct_mean);
  CHECK(none.rss_peak_bytes == 0);
}

TEST_CASE("format_bytes shows GiB from one GiB on, MiB below", "[usage]") {
  CHECK(format_bytes(0) == "0 B");
  CHECK(format_bytes(312 * kMiB) == "312 MiB");
  CHECK(format_bytes(kGiB) == "1.0 GiB");
  CHECK(format_bytes(kGiB + kGiB / 2) == "1.5 GiB");
  CHECK(format_bytes(12 * kGiB + 100 * kMiB) == "12.1 GiB");
}
