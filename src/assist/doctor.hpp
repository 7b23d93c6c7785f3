#pragma once
// `ddpctl doctor`: what this site's Slurm can do, probed from the login
// node, and a cluster profile drafted from it (partitions, GPU types, node
// sizes, time limits) for the user to check and keep.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "remote/remote_call.hpp"
#include "slurm/slurm.hpp"

namespace ddpctl {

struct DoctorCheck {
  std::string what;
  bool ok = false;
  std::string detail;
};

struct SiteReport {
  std::vector<DoctorCheck> checks;  // in the order they ran
  std::string fatal;                // why the probe stopped early (no profile then)
  std::string profile_yaml;         // the drafted profile
};

// What the nodes of one partition have in common, as the draft writes it:
// the smallest node's CPUs, memory and GPUs, the GPU types and features of
// any, and sinfo's time limits.
struct PartitionFacts {
  int nodes = 0;
  int min_cpus = 0;
  long long min_mem = 0;
  int min_gpus = -1;
  std::set<std::string> gpu_types, features;
  std::string max_time, default_time;
  bool is_default = false;
};
// Each partition of `nodes`, with its time limits and whether it is the
// default from `sinfo_times` (sinfo -h -o "%P|%l|%L": "cpu*|1:00:00|10:00");
// a time Slurm does not give ("n/a", "infinite") is left empty.
std::map<std::string, PartitionFacts> partition_facts(const std::vector<NodeInfo>& nodes,
                                                      const std::string& sinfo_times);

// `name`: the profile's name; empty: Slurm's ClusterName, else "mysite".
// `now_iso`: the time written into the draft's heading.
SiteReport diagnose_site(SlurmClient& slurm, const std::string& name, const std::string& now_iso);

// `doctor --on HOST`: the same of the login host's Slurm, asked from here
// through the session (each Slurm command one ssh call), and which ddpctl
// the jobs there would run (remote.hpp); `said` gets the lines that say so.
SiteReport diagnose_remote_site(RemoteSession& session, const std::string& name, const std::string& now_iso,
                                std::vector<std::string>& said);

}  // namespace ddpctl
