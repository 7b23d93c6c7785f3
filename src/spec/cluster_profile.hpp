#pragma once
// A cluster profile as data: how one site wants GPUs requested, what its
// partitions hold, and its default network, NCCL settings, modules and
// container. cluster.hpp loads it. Model layer (docs/architecture.md).
#include <optional>
#include <string>
#include <vector>

#include "spec/peak_flops.hpp"
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
  std::optional<PeakTflops> peak_tflops;  // one GPU's peak: report's MFU
  Location where;
};

// What a preemption does to a job of a partition or QOS (`preemptible:`,
// docs/profiles.md "Preemption"), as `ddpctl doctor` read it from Slurm.
struct PreemptTerms {
  std::string mode;                  // requeue, cancel or suspend; "" when not known
  std::optional<long long> grace_s;  // GraceTime: seconds between the signal and SIGKILL
  std::optional<long long> exempt_s; // PreemptExemptTime of a QOS
  std::vector<std::string> by;       // whose jobs preempt it
  Location where;
};

// The site's side of preemption (`preemption:`): the plugin, how long a job
// runs before it can be preempted, whether its --signal is sent at preemption.
struct SitePreemption {
  std::string type;                   // preempt/partition_prio, preempt/qos, preempt/none
  std::optional<long long> exempt_s;  // PreemptExemptTime
  std::optional<bool> user_signal;    // send_user_signal: --signal at preemption, else SIGTERM
  Location where;
};

struct QosEntry {
  std::string name;
  std::optional<PreemptTerms> preemptible;
  Location where;
};

struct Partition {
  std::string name;
  int gpus_per_node = 0;
  std::vector<std::string> gpu_types;  // empty: any type the profile knows
  std::optional<int> nodes, cpus_per_node, cpus_per_gpu;
  std::optional<long long> mem_per_node_mib, max_time_s;
  bool implicit = false;  // the site picks it: limits apply, no --partition line
  std::optional<PreemptTerms> preemptible;  // its jobs can be preempted
  // The all-reduce bus bandwidth across its nodes, GB/s (nccl-tests' busbw;
  // `plan`'s communication floor, explain/comm_floor.hpp); none: not known.
  std::optional<double> busbw_gbs;
  // One node's CPUs' peak, for runs on its CPUs (report's MFU; a GPU's is
  // its type's).
  std::optional<PeakTflops> peak_tflops;
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
  std::optional<SitePreemption> preemption;
  std::vector<QosEntry> qos;
  FabricCheckSettings fabric_check;  // the site's defaults of the spec's fabric_check:

  const QosEntry* find_qos(const std::string& name) const;

  const GpuType* find_gpu_type(const std::string& name) const;
  const Partition* find_partition(const std::string& name) const;
  std::vector<std::string> gpu_type_names() const;
  std::vector<std::string> partition_names() const;
};

}  // namespace ddpctl
