#pragma once
// A device's peak floating-point rate as a site profile gives it
// (docs/profiles.md "Peak FLOP/s"): `gpu_types.NAME.peak_tflops` for one
// GPU, `partitions.NAME.peak_tflops` for one CPU node; one dense figure
// (TFLOP/s, without sparsity, from the vendor's datasheet) for any
// precision, or one per precision. MFU's denominator (explain/mfu.hpp).
#include <map>
#include <optional>
#include <string>

#include "base/yaml_reader.hpp"

namespace ddpctl {

struct PeakTflops {
  std::optional<double> any;                 // `peak_tflops: 312`
  std::map<std::string, double> by_precision;  // `peak_tflops: {bf16: 312, fp32: 19.5}`
  bool empty() const { return !any && by_precision.empty(); }
  // The figure for a run's precision (fp32, tf32, bf16, fp16, fp8; "" when
  // the run does not say): its own, else the one for any precision.
  std::optional<double> for_precision(const std::string& precision) const;
};

// The precisions a per-precision peak may name.
const char* const* peak_precisions();

// `key` of the mapping `r` reads: a number above 0, or a mapping of
// precisions to such numbers; problems recorded at their line.
std::optional<PeakTflops> read_peak_tflops(MapReader& r, const std::string& key);

}  // namespace ddpctl
