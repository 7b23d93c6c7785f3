#pragma once
// `ddpctl calibrate PARTITION --profile FILE` (docs/running.md "The
// fabric"): the partition's all-reduce bus bandwidth measured by the
// bundled trainer (`ddp-train --allreduce-bench`, trainer.md) in jobs over
// its nodes: disjoint pairs of nodes at once, and the whole set; the pairs'
// median (what a node pair of a training run gets) is the figure, written
// into the profile as `partitions.NAME.busbw_gbs` with --write.
#include <optional>
#include <string>
#include <vector>

#include "runs/output.hpp"
#include "slurm/context.hpp"

namespace ddpctl {

struct CalibrateRequest {
  std::string partition, profile;  // the profile's file
  int nodes = 2;                   // the whole set; pairs when 4 or more
  std::string size = "256M";       // --allreduce-bench's size
  int iters = 20;
  std::string runs_root, work_dir, templates_dir;  // where the runs and their specs go; the templates
  bool write = false;               // write the figure into the profile
};

struct FabricMeasure {
  std::string run_id, nodes;  // "g[1-2]"
  int node_count = 0;
  std::optional<double> busbw_gbs;
  std::string problem;  // why there is no figure
};

struct Calibration {
  std::vector<FabricMeasure> pairs;
  std::optional<FabricMeasure> whole;
  std::optional<double> median_gbs, min_gbs, max_gbs;  // over the pairs
  bool written = false;
};

// The busbw of the largest size in a rank-0 log's `{"allreduce": ...}` lines.
std::optional<double> busbw_of_log(const std::string& text);

// The profile's text with `busbw_gbs: VALUE` in partitions.PARTITION (a
// flow mapping on one line gets the key, a block mapping a line), the
// value replaced where the key is; nullopt when the partition's entry is
// not found in either form.
std::optional<std::string> profile_with_busbw(const std::string& text, const std::string& partition, double gbs);

// Submits the measuring runs, waits for them, reads their figures.
Calibration calibrate(const CalibrateRequest& request, Context& ctx, Output& out);

}  // namespace ddpctl
