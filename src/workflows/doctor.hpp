#pragma once
// `ddpctl doctor`: what this site's Slurm can do, probed from the login
// node, and a cluster profile drafted from it (partitions, GPU types, node
// sizes, time limits) for the user to check and keep.
#include <string>
#include <vector>

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

// `name`: the profile's name; empty: Slurm's ClusterName, else "mysite".
// `now_iso`: the time written into the draft's heading.
SiteReport diagnose_site(SlurmClient& slurm, const std::string& name, const std::string& now_iso);

}  // namespace ddpctl
