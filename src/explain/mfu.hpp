#pragma once
// Model FLOPs utilisation (docs/report.md "Model FLOPs utilisation"): the
// FLOP/s the training did (its metrics' flops_per_sample x its
// throughput) over the peak of the devices it ran on (a GPU's, or a CPU
// node's, as the site profile gave it when the run was made). Known only
// where both are: "unknown" and why otherwise, never a guess.
#include <optional>
#include <string>

#include "runs/progress.hpp"
#include "runs/run_record.hpp"

namespace ddpctl {

struct Mfu {
  std::optional<double> value;  // a fraction: 0.31 = 31%
  std::string words;            // its basis, or "unknown: " and why
};

// `last`: the metrics' last epoch (what ran, on what, at what precision);
// `img_per_s`: the run's throughput over all ranks (report.hpp's mean).
Mfu model_flops_utilisation(const RunShape& shape, const EpochMetrics& last, std::optional<double> img_per_s);

}  // namespace ddpctl
