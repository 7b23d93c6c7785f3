#pragma once
// `fabric_check:` in a run spec and in a cluster profile (docs/running.md
// "The fabric check"): the all-reduce measured across the allocation before
// training, against the partition's expected bus bandwidth
// (partitions.NAME.busbw_gbs). The profile's values are the site's
// defaults; the spec's, field by field, override them.
#include <optional>
#include <string>

#include "base/diagnostics.hpp"
#include "base/yaml_reader.hpp"

namespace ddpctl {

struct FabricCheckSettings {
  // false: off; true: on (refused where it cannot run); unset: on for runs
  // of 2 nodes or more whose partition has busbw_gbs.
  std::optional<bool> enabled;
  std::optional<double> warn_below;   // a fraction of the expected busbw: below it, a warning (0.8)
  std::optional<double> fail_below;   // below it, bisection and exclusion (0.5)
  std::optional<std::string> size;    // the size judged, in bytes with K/M/G ("64M"; "8M" on CPU partitions)
  std::optional<int> iters;           // all-reduces timed per measurement (5)
  std::optional<long long> timeout_s; // the bound of each of its measurements (1m)
  Location where;                     // the section, for errors

  static constexpr double kWarnDefault = 0.8, kFailDefault = 0.5;
  static constexpr int kItersDefault = 5;
  static constexpr long long kTimeoutDefault = 60;
};

// Reads `fabric_check:` of `top` (false | true | a mapping) into `s`.
void read_fabric_check(MapReader& top, FabricCheckSettings& s);
// The spec's fields over the profile's.
FabricCheckSettings merge_fabric_check(const FabricCheckSettings& profile, const FabricCheckSettings& spec);
// The bytes of a size as ddp-train --allreduce-bench reads it ("64M"), or
// nullopt when it is none.
std::optional<long long> fabric_size_bytes(const std::string& text);

}  // namespace ddpctl
