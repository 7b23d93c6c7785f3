#pragma once
// Whether a shape's job checks its fabric before training, and with what
// (fabric_check: of the spec over the profile's, the partition's
// busbw_gbs): the job script's `job fabric` line (agent.sh.mustache;
// agent/fabric_check.hpp runs it).
#include <kainjow/mustache.hpp>
#include <optional>
#include <string>

#include "script/resolve.hpp"

namespace ddpctl {

struct FabricPlan {
  double expected_gbs = 0, warn_below = 0, fail_below = 0;
  std::string size;
  int iters = 0;
  long long timeout_s = 0;
};

// nullopt: no check (turned off, one node, or on by default where the
// partition has no busbw_gbs). A UserError naming the field where the
// spec turns it on and it cannot run (one node, no expected figure).
std::optional<FabricPlan> fabric_plan(const ResolvedRun& run, const ResolvedShape& shape);
// The template's `fabric` section: the plan's words for `job fabric`, or false.
kainjow::mustache::data fabric_data(const ResolvedRun& run, const ResolvedShape& shape);

}  // namespace ddpctl
