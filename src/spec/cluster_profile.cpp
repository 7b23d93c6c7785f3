#include "spec/cluster_profile.hpp"

namespace ddpctl {

const char* dialect_name(GpuDialect d) {
  switch (d) {
    case GpuDialect::Gres: return "gres";
    case GpuDialect::GpusPerNode: return "gpus-per-node";
    case GpuDialect::Constraint: return "constraint";
    case GpuDialect::Partition: return "partition";
  }
  return "?";
}

const GpuType* ClusterProfile::find_gpu_type(const std::string& n) const {
  for (const auto& t : gpu_types)
    if (t.name == n) return &t;
  return nullptr;
}

const Partition* ClusterProfile::find_partition(const std::string& n) const {
  for (const auto& p : partitions)
    if (p.name == n) return &p;
  return nullptr;
}

std::vector<std::string> ClusterProfile::gpu_type_names() const {
  std::vector<std::string> out;
  for (const auto& t : gpu_types) out.push_back(t.name);
  return out;
}

std::vector<std::string> ClusterProfile::partition_names() const {
  std::vector<std::string> out;
  for (const auto& p : partitions) out.push_back(p.name);
  return out;
}

const QosEntry* ClusterProfile::find_qos(const std::string& n) const {
  for (const auto& q : qos)
    if (q.name == n) return &q;
  return nullptr;
}

}  // namespace ddpctl
