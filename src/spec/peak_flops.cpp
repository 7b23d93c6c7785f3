#include "spec/peak_flops.hpp"

namespace ddpctl {

namespace {
// The largest dense figure a device has today is a few thousand TFLOP/s (FP8).
constexpr double kMaxTflops = 100000;
const char* const kPrecisions[] = {"fp32", "tf32", "bf16", "fp16", "fp8", nullptr};
}  // namespace

const char* const* peak_precisions() { return kPrecisions; }

std::optional<double> PeakTflops::for_precision(const std::string& precision) const {
  if (auto it = by_precision.find(precision); it != by_precision.end()) return it->second;
  return any;
}

std::optional<PeakTflops> read_peak_tflops(MapReader& r, const std::string& key) {
  if (!r.has(key)) return std::nullopt;
  YAML::Node node = r.node(key);
  PeakTflops peak;
  if (!node.IsMap()) {
    peak.any = r.positive_number(key, kMaxTflops);
    return peak.any ? std::optional<PeakTflops>(peak) : std::nullopt;
  }
  MapReader m(r.document(), node, r.field(key), r.diagnostics());
  for (const char* const* p = kPrecisions; *p; ++p)
    if (auto v = m.positive_number(*p, kMaxTflops)) peak.by_precision[*p] = *v;
  m.finish();  // an unknown precision, with "did you mean"
  if (peak.by_precision.empty()) {
    if (node.size() == 0)
      r.error(key, "gives no figure: a number of TFLOP/s, or one for each precision (fp32, tf32, bf16, fp16, fp8)");
    return std::nullopt;
  }
  return peak;
}

}  // namespace ddpctl
