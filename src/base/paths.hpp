#pragma once
// Where ddpctl finds what it ships and what a site adds, relative to the
// running binary so that an installed prefix can be moved (a module under
// /apps, a .deb under /usr) and a build tree works as it is:
//   <prefix>/bin/ddpctl, <prefix>/bin/ddp-train
//   <prefix>/share/ddpctl/templates, <prefix>/share/ddpctl/configs/clusters
//   <prefix>/etc/ddpctl/clusters (site profiles; /etc/ddpctl/clusters too)
#include <string>
#include <vector>

#include "base/diagnostics.hpp"

namespace ddpctl {

// The running ddpctl's own path, and its folder ("" if it cannot be read).
std::string executable_path();
std::string executable_dir();

// The running binary's prefix when it is installed (<prefix>/bin/ddpctl
// beside <prefix>/share/ddpctl/templates), else "".
std::string installed_prefix();

// The ddpctl the sbatch scripts run on the nodes (the job agent, race-again):
// $DDPCTL_PROGRAM, else this program's own path.
std::string agent_program();

// The folder holding ddpctl's bundled templates/ and configs/clusters/:
// $DDPCTL_DATA_DIR, else <prefix>/share/ddpctl beside the running binary,
// else the source tree this binary was built from (a build tree).
std::string data_dir();

// Site-wide profile folders, for an admin to drop a profile into once for
// every user: $DDPCTL_SITE_CLUSTERS (colon-separated; the environment
// module sets it), /etc/ddpctl/clusters, then <prefix>/etc/ddpctl/clusters
// of the running binary (when its prefix is not /usr).
std::vector<std::string> site_cluster_dirs();

// Folders searched for cluster profiles, in order: $DDPCTL_CLUSTERS (a
// colon-separated list), ~/.config/ddpctl/clusters (or $XDG_CONFIG_HOME's),
// the site's folders, the bundled profiles.
std::vector<std::string> cluster_search_path();

// Resolves a spec's `cluster:` value to a profile file. A value with a '/' or
// a .yaml/.yml ending is a path (relative to the spec's folder); otherwise it
// names NAME.yaml in the search path. Throws UserError at `where` if none.
std::string find_cluster_profile(const std::string& cluster, const std::string& spec_file, const Location& where);

// The trainer a spec that names none runs: $DDPCTL_TRAINER; else ddp-train
// by name when this host's PATH has it (the job inherits this PATH); else,
// by absolute path, the ddp-train installed beside this ddpctl
// (<prefix>/bin) or built beside it (build/trainer); else the bare name,
// which the preflight then reports as not found.
std::string default_trainer_program();

// `name` as PATH finds it (an absolute path), or "" (a name with a '/' is
// checked as it is).
std::string find_program(const std::string& name);
// ... on `path_list` (PATH's form: folders separated by ':').
std::string find_on_path(const std::string& path_list, const std::string& name);

}  // namespace ddpctl
