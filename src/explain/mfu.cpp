#include "explain/mfu.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace ddpctl {

namespace {

// The precision of the step as the metrics say it (ddp-train's amp: off,
// bf16, fp16); "" when they do not.
std::string precision_of(const EpochMetrics& m) {
  if (m.amp == "off") return "fp32";
  if (m.amp == "bf16" || m.amp == "fp16") return m.amp;
  return "";
}

std::string no_peak(const RunShape& shape, bool gpu) {
  if (gpu && shape.gpu_type.empty())
    return "unknown: the spec names no gpu_type, so its GPUs' peak is not known";
  if (gpu)
    return fmt::format("unknown: the site profile gives no peak_tflops for GPU type {} (gpu_types.{}.peak_tflops, "
                       "docs/profiles.md)",
                       shape.gpu_type, shape.gpu_type);
  std::string part = shape.partition.empty() ? "its partition" : "partition " + shape.partition;
  return fmt::format("unknown: the site profile gives no peak_tflops for {}'s CPU nodes (partitions.NAME.peak_tflops, "
                     "docs/profiles.md)",
                     part);
}

}  // namespace

Mfu model_flops_utilisation(const RunShape& shape, const EpochMetrics& last, std::optional<double> img_per_s) {
  Mfu out;
  if (!last.flops_per_sample) {
    out.words = "unknown: its metrics give no flops_per_sample (the bundled trainer writes it; another program "
                "can, docs/report.md)";
    return out;
  }
  if (!img_per_s || *img_per_s <= 0) {
    out.words = "unknown: its metrics give no throughput (img_per_s)";
    return out;
  }
  bool shape_gpu = shape.gpus_per_node > 0;
  bool gpu = last.device.empty() ? shape_gpu : last.device == "cuda";
  if (gpu != shape_gpu) {
    out.words = fmt::format("unknown: it trained on {} in a shape of {} GPU(s) per node", gpu ? "GPUs" : "CPUs",
                            shape.gpus_per_node);
    return out;
  }
  if (!shape.peak) {
    out.words = no_peak(shape, gpu);
    return out;
  }
  std::string precision = precision_of(last);
  std::optional<double> peak = shape.peak->for_precision(precision);
  if (!peak) {
    out.words = precision.empty()
                    ? fmt::format("unknown: {} gives a peak per precision, and its metrics do not say the precision "
                                  "(amp: off, bf16 or fp16)",
                                  shape.peak_from)
                    : fmt::format("unknown: {} gives no figure for {}", shape.peak_from, precision);
    return out;
  }
  // One rank a GPU; on CPUs, a node's ranks share its CPUs.
  int devices = gpu ? (last.world_size > 0 ? last.world_size : shape.nodes * shape.gpus_per_node)
                    : (last.world_size > 0 ? (last.world_size + shape.ranks_per_node - 1) / std::max(1, shape.ranks_per_node)
                                           : shape.nodes);
  devices = std::max(1, devices);
  double done = *last.flops_per_sample * *img_per_s;
  out.value = done / (*peak * 1e12 * devices);
  out.words = fmt::format("{:.2f}% of {} {}{} x {:g} TFLOP/s{} ({}): {:.4g} GFLOP a sample at {:.1f} samples/s",
                          100 * *out.value, devices, gpu ? "GPU" : "CPU node", devices == 1 ? "" : "s", *peak,
                          precision.empty() ? "" : " " + precision, shape.peak_from, *last.flops_per_sample / 1e9,
                          *img_per_s);
  return out;
}

}  // namespace ddpctl
