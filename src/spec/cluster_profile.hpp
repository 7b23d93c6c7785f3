#pragma once
// A cluster profile as data: how one site wants GPUs requested, what its
// partitions hold, and its default network, NCCL settings, modules and
// container. cluster.hpp loads it. Model layer (docs/architecture.md).
#include <optional>
#include <string>
#include <vector>

#include "spec/run_spec.hpp"

namespace ddpctl {

// How a site wants GPUs requested.
enum class GpuDialect {
  Gres,         // --gres=gpu:TYPE:N
  GpusPerNode,  // --gpus-per-node=TYPE:N
  Constraint,   // --gres=gpu:N --constraint=TYPE
  Partition,    // the GPU type picks the partition; --gres=gpu:N
};
const char* dialect_name(GpuDialect d);

struct GpuType {
  std::string name;        // the user's name, e.g. a100-80gb
  std::string gres;        // GRES type, e.g. a100 (defaults to name)
  std::string constraint;  // feature expression (defaults to name)
  std::string partition;   // partition that holds this type, if one does
  std::optional<int> gpus_per_node;
  Location where;
};

struct Partition {
  std::string name;
  int gpus_per_node = 0;
  std::vector<std::string> gpu_types;  // empty: any type the profile knows
  std::optional<int> nodes, cpus_per_node, cpus_per_gpu;
  std::optional<long long> mem_per_node_mib, max_time_s;
  bool implicit = false;  // the site picks it: limits apply, no --partition line
  Location where;
};

struct ClusterProfile {
  std::string file;
  std::string name;
  std::string description;
  GpuDialect dialect = GpuDialect::Gres;
  std::string default_partition;
  std::optional<long long> default_time_s;
  std::vector<GpuType> gpu_types;
  std::vector<Partition> partitions;
  std::string interface;  // network interface of the fast fabric, e.g. ib0
  NcclSettings nccl;
  std::vector<std::string> modules;
  EnvList env;
  ContainerSettings container;  // the site's default runtime, mounts and options

  const GpuType* find_gpu_type(const std::string& name) const;
  const Partition* find_partition(const std::string& name) const;
  std::vector<std::string> gpu_type_names() const;
  std::vector<std::string> partition_names() const;
};

}  // namespace ddpctl
