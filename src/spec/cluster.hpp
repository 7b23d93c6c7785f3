#pragma once
// Loading a cluster profile (cluster_profile.hpp has the types).
#include <string>

#include "spec/cluster_profile.hpp"

namespace ddpctl {

ClusterProfile load_cluster_profile(const std::string& path);
ClusterProfile parse_cluster_profile(const std::string& file, const std::string& text);

}  // namespace ddpctl
