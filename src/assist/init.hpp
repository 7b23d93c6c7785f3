#pragma once
// `ddpctl init`: a commented starter run spec for a cluster profile and a
// shape, valid as written (`ddpctl gen` accepts it), so that a new user does
// not start by copying an example.
#include <optional>
#include <string>
#include <vector>

#include "spec/cluster_profile.hpp"

namespace ddpctl {

struct InitRequest {
  std::string cluster;  // a profile name or path (required)
  std::string name;     // the run's name; default: the output file's stem, else "train"
  std::string output;   // the file to write; default NAME.yaml here
  int nodes = 1;
  std::optional<int> gpus;  // per node; default: what the chosen partition holds
  std::string gpu_type, partition, time, account;
  std::vector<std::string> command;  // empty: the bundled trainer on synthetic data
};

// The shape a starter spec names: the GPU type, partition and GPUs per node
// each as asked (InitRequest) or as the profile suggests: a GPU type's own
// partition, the default one, or the first that holds the GPUs asked.
// `partition` empty: the spec names none (the site picks, or the type does);
// `chosen`: the partition the job lands in, if known (for its time limit).
// Throws UserError, naming the option, for what the profile cannot hold.
struct StarterShape {
  std::string type, partition;
  const Partition* chosen = nullptr;  // into the profile
  int gpus = 0;
};
StarterShape choose_starter_shape(const InitRequest& request, const ClusterProfile& profile);

// The spec's text for `profile` (found at `profile_ref`, as the spec will
// name it). Throws UserError, naming the option, for what the profile cannot
// hold (an unknown GPU type or partition, more GPUs than any partition has).
std::string starter_spec(const InitRequest& request, const ClusterProfile& profile, const std::string& profile_ref,
                         const std::string& today);

// Finds the profile, writes the spec to request.output (refusing to replace
// a file that exists), after checking that it resolves as written. Returns
// the path written.
std::string write_starter_spec(InitRequest request, const std::string& today);

}  // namespace ddpctl
