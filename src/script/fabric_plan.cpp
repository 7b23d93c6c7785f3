#include "script/fabric_plan.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "base/diagnostics.hpp"
#include "base/paths.hpp"
#include "base/values.hpp"

namespace ddpctl {

namespace {

// On CPU nodes the buffer and Gloo's copy of it are in each rank's memory:
// a size they cannot hold is refused here, not after the job's wait (on
// GPUs the buffer is in the GPU's memory, which the profile does not give:
// ddp-train says it in the job).
void check_size_fits(const std::string& size, const ResolvedShape& shape, const Partition* part, const Location& where) {
  if (shape.gpus_per_node > 0) return;
  auto bytes = fabric_size_bytes(size);
  std::optional<long long> mib = shape.asked.mem_mib;
  std::string from = "the spec's mem";
  if (!mib && part && part->mem_per_node_mib) mib = part->mem_per_node_mib, from = "partitions." + part->name + ".mem_per_node";
  if (!bytes || !mib) return;
  double need = 2.0 * static_cast<double>(*bytes);  // one rank a node on CPU nodes
  if (need <= static_cast<double>(*mib) * 1048576.0) return;
  throw UserError(where, "fabric_check.size",
                  fmt::format("{}, twice on a node (the buffer and Gloo's copy of it), is more than the {} a node "
                              "has ({}): a smaller size measures the same bus bandwidth",
                              size, format_memory(*mib), from));
}

}  // namespace

std::optional<FabricPlan> fabric_plan(const ResolvedRun& run, const ResolvedShape& shape) {
  FabricCheckSettings s = merge_fabric_check(run.profile.fabric_check, run.spec.fabric_check);
  if (s.enabled == false || !run.spec.monitor.enabled) return std::nullopt;
  bool asked = s.enabled == true;
  Location where = s.where.line > 0 ? s.where : Location{run.spec.file};
  std::string part_name = shape.partition.empty() ? run.profile.default_partition : shape.partition;
  const Partition* part = run.profile.find_partition(part_name);
  if (shape.nodes + shape.spares < 2) {
    if (!asked) return std::nullopt;
    throw UserError(where, "fabric_check",
                    fmt::format("shape {} runs on one node: there is no fabric between nodes to check (turn "
                                "fabric_check off for it, or ask for 2 nodes or more)",
                                shape.label));
  }
  if (!part || !part->busbw_gbs) {
    if (!asked) return std::nullopt;
    throw UserError(where, "fabric_check",
                    fmt::format("partition {} has no busbw_gbs in {}: the check needs the figure it is judged by "
                                "(`ddpctl calibrate {} --profile {} --write` measures and writes it)",
                                part_name.empty() ? "(the default)" : part_name, run.profile.file,
                                part_name.empty() ? "PARTITION" : part_name, run.profile.file));
  }
  FabricPlan p;
  p.expected_gbs = *part->busbw_gbs;
  p.warn_below = s.warn_below.value_or(FabricCheckSettings::kWarnDefault);
  p.fail_below = s.fail_below.value_or(FabricCheckSettings::kFailDefault);
  if (p.fail_below > p.warn_below)
    throw UserError(where, "fabric_check.fail_below",
                    fmt::format("{} is above warn_below ({}): a run below the failure level is also below the "
                                "warning level",
                                p.fail_below, p.warn_below));
  // Gloo on CPU nodes: a buffer a CPU node moves in a fraction of a second.
  p.size = s.size.value_or(shape.gpus_per_node > 0 ? "64M" : "8M");
  check_size_fits(p.size, shape, part, where);
  p.iters = s.iters.value_or(FabricCheckSettings::kItersDefault);
  p.timeout_s = s.timeout_s.value_or(FabricCheckSettings::kTimeoutDefault);
  return p;
}

kainjow::mustache::data fabric_data(const ResolvedRun& run, const ResolvedShape& shape) {
  auto p = fabric_plan(run, shape);
  if (!p) return kainjow::mustache::data::type::bool_false;
  kainjow::mustache::data d;
  d.set("expected", fmt::format("{}", p->expected_gbs));
  d.set("warn_below", fmt::format("{}", p->warn_below));
  d.set("fail_below", fmt::format("{}", p->fail_below));
  d.set("size", p->size);
  d.set("iters", std::to_string(p->iters));
  d.set("timeout", std::to_string(p->timeout_s));
  d.set("trainer", default_trainer_program());
  // One rank a GPU, as training's; one a node on CPU nodes.
  d.set("tasks_per_node", std::to_string(std::max(1, shape.gpus_per_node)));
  d.set("gpus", shape.gpus_per_node > 0);
  return d;
}

}  // namespace ddpctl
