// Model FLOPs utilisation (explain/mfu.hpp, docs/report.md): a profile's
// peak_tflops as read (one figure, or one per precision; bad figures named
// with their line), and the MFU of a run from its metrics' last epoch and
// throughput, or "unknown" and why.
#include "catch.hpp"

#include "explain/mfu.hpp"
#include "helpers.hpp"
#include "spec/cluster.hpp"

using namespace ddpctl;
using Catch::Matchers::Contains;

TEST_CASE("a profile's peak_tflops: a GPU type's per precision or for any, a partition's CPU node's") {
  ClusterProfile p = parse_cluster_profile("clusters/site.yaml",
                                           "name: site\n"
                                           "gpu_request: gres\n"
                                           "gpu_types:\n"
                                           "  h100: {peak_tflops: {bf16: 989, fp32: 67}}\n"
                                           "  l4: {peak_tflops: 121}\n"
                                           "  old: {}\n"
                                           "partitions:\n"
                                           "  cpu: {nodes: 4, peak_tflops: 3.2}\n");
  const PeakTflops& h100 = *p.find_gpu_type("h100")->peak_tflops;
  CHECK(*h100.for_precision("bf16") == 989);
  CHECK(*h100.for_precision("fp32") == 67);
  CHECK_FALSE(h100.for_precision("fp16"));
  CHECK_FALSE(h100.for_precision(""));
  CHECK(*p.find_gpu_type("l4")->peak_tflops->for_precision("fp16") == 121);
  CHECK(*p.find_gpu_type("l4")->peak_tflops->for_precision("") == 121);
  CHECK_FALSE(p.find_gpu_type("old")->peak_tflops);
  CHECK(*p.find_partition("cpu")->peak_tflops->any == 3.2);
  std::string err = test::user_error_of([] {
    parse_cluster_profile("clusters/x.yaml",
                          "name: x\n"
                          "gpu_request: gres\n"
                          "gpu_types:\n"
                          "  a: {peak_tflops: 0}\n"
                          "  b: {peak_tflops: {bf16: -5}}\n"
                          "  c: {peak_tflops: {fp64: 60}}\n"
                          "  d: {peak_tflops: {}}\n"
                          "partitions:\n"
                          "  cpu: {peak_tflops: fast}\n");
  });
  INFO(err);
  CHECK_THAT(err, Contains("clusters/x.yaml:4:") && Contains("gpu_types.a.peak_tflops") && Contains("'0' is out of range"));
  CHECK_THAT(err, Contains("clusters/x.yaml:5:") && Contains("gpu_types.b.peak_tflops.bf16") && Contains("'-5' is out of range"));
  CHECK_THAT(err, Contains("clusters/x.yaml:6:") && Contains("fp64"));
  CHECK_THAT(err, Contains("clusters/x.yaml:7:") && Contains("gpu_types.d.peak_tflops") && Contains("gives no figure"));
  CHECK_THAT(err, Contains("clusters/x.yaml:9:") && Contains("partitions.cpu.peak_tflops") && Contains("'fast' is not a number"));
}

namespace {

RunShape gpu_shape() {
  RunShape s;
  s.label = "2x4";
  s.nodes = 2;
  s.gpus_per_node = 4;
  s.ranks_per_node = 4;
  s.gpu_type = "h100";
  PeakTflops peak;
  peak.by_precision = {{"bf16", 989}, {"fp32", 67}};
  s.peak = peak;
  s.peak_from = "gpu_types.h100.peak_tflops in site.yaml";
  return s;
}

EpochMetrics epoch(const std::string& device, const std::string& amp, std::optional<double> flops, int world) {
  EpochMetrics m;
  m.device = device;
  m.amp = amp;
  m.flops_per_sample = flops;
  m.world_size = world;
  return m;
}

}  // namespace

TEST_CASE("MFU: the FLOP/s done over the devices' peak at the run's precision") {
  RunShape s = gpu_shape();
  // 8 H100s in bf16: 1e10 FLOPs a sample x 20,000 samples/s over 8 x 989 TFLOP/s.
  Mfu m = model_flops_utilisation(s, epoch("cuda", "bf16", 1e10, 8), 20000);
  REQUIRE(m.value);
  CHECK(*m.value == Approx(1e10 * 20000 / (8 * 989e12)));
  CHECK_THAT(m.words, Contains("2.53% of 8 GPUs x 989 TFLOP/s bf16 (gpu_types.h100.peak_tflops in site.yaml)"));
  // Without AMP, the fp32 figure.
  CHECK(*model_flops_utilisation(s, epoch("cuda", "off", 1e10, 8), 20000).value == Approx(1e10 * 20000 / (8 * 67e12)));
  // A precision the profile has no figure for, or one the metrics do not say.
  CHECK_THAT(model_flops_utilisation(s, epoch("cuda", "fp16", 1e10, 8), 20000).words,
             Contains("unknown: gpu_types.h100.peak_tflops in site.yaml gives no figure for fp16"));
  CHECK_THAT(model_flops_utilisation(s, epoch("", "", 1e10, 0), 20000).words,
             Contains("do not say the precision"));
  // One figure for any precision: the metrics need not say it; no world
  // size: the shape's GPUs.
  s.peak = PeakTflops{989, {}};
  Mfu any = model_flops_utilisation(s, epoch("", "", 1e10, 0), 20000);
  REQUIRE(any.value);
  CHECK(*any.value == Approx(1e10 * 20000 / (8 * 989e12)));
}

TEST_CASE("MFU unknown, and why: no FLOPs, no throughput, no peak, no GPU type, another device") {
  RunShape s = gpu_shape();
  Mfu none = model_flops_utilisation(s, epoch("cuda", "bf16", std::nullopt, 8), 20000);
  CHECK_FALSE(none.value);
  CHECK_THAT(none.words, Contains("unknown: its metrics give no flops_per_sample"));
  CHECK_THAT(model_flops_utilisation(s, epoch("cuda", "bf16", 1e10, 8), std::nullopt).words,
             Contains("unknown: its metrics give no throughput"));
  CHECK_THAT(model_flops_utilisation(s, epoch("cpu", "off", 1e10, 8), 20000).words,
             Contains("unknown: it trained on CPUs in a shape of 4 GPU(s) per node"));
  s.peak.reset();
  CHECK_THAT(model_flops_utilisation(s, epoch("cuda", "bf16", 1e10, 8), 20000).words,
             Contains("no peak_tflops for GPU type h100 (gpu_types.h100.peak_tflops"));
  s.gpu_type.clear();
  CHECK_THAT(model_flops_utilisation(s, epoch("cuda", "bf16", 1e10, 8), 20000).words,
             Contains("the spec names no gpu_type"));
  // CPU nodes: a node's peak, ranks sharing it.
  RunShape cpu;
  cpu.nodes = 4;
  cpu.ranks_per_node = 2;
  cpu.partition = "cpu";
  CHECK_THAT(model_flops_utilisation(cpu, epoch("cpu", "off", 1e9, 8), 100).words,
             Contains("no peak_tflops for partition cpu's CPU nodes"));
  cpu.peak = PeakTflops{2.0, {}};
  cpu.peak_from = "partitions.cpu.peak_tflops in site.yaml";
  Mfu c = model_flops_utilisation(cpu, epoch("cpu", "off", 1e9, 8), 100);
  REQUIRE(c.value);
  CHECK(*c.value == Approx(1e9 * 100 / (4 * 2e12)));
  CHECK_THAT(c.words, Contains("of 4 CPU nodes x 2 TFLOP/s fp32"));
}
