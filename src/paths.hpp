#pragma once
#include <string>
#include <vector>

#include "diagnostics.hpp"

namespace ddpctl {

// The folder holding ddpctl's bundled templates/ and configs/clusters/:
// $DDPCTL_DATA_DIR, else the installed share/ddpctl, else the source tree
// this binary was built from.
std::string data_dir();

// Folders searched for cluster profiles, in order: $DDPCTL_CLUSTERS (a
// colon-separated list), ~/.config/ddpctl/clusters, the bundled profiles.
std::vector<std::string> cluster_search_path();

// Resolves a spec's `cluster:` value to a profile file. A value with a '/' or
// a .yaml/.yml ending is a path (relative to the spec's folder); otherwise it
// names NAME.yaml in the search path. Throws UserError at `where` if none.
std::string find_cluster_profile(const std::string& cluster, const std::string& spec_file, const Location& where);

}  // namespace ddpctl
