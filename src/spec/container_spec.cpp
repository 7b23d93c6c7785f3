#include "spec/container_spec.hpp"

namespace ddpctl {

namespace {

struct RuntimeName {
  ContainerRuntime runtime;
  const char* name;
};
const RuntimeName kRuntimes[] = {{ContainerRuntime::Apptainer, "apptainer"},
                                 {ContainerRuntime::Singularity, "singularity"},
                                 {ContainerRuntime::Pyxis, "pyxis"},
                                 {ContainerRuntime::Podman, "podman"},
                                 {ContainerRuntime::Charliecloud, "charliecloud"}};

}  // namespace

const char* runtime_name(ContainerRuntime r) {
  for (const auto& n : kRuntimes)
    if (n.runtime == r) return n.name;
  return "?";
}

std::optional<ContainerRuntime> parse_runtime(const std::string& name) {
  for (const auto& n : kRuntimes)
    if (name == n.name) return n.runtime;
  return std::nullopt;
}

const std::vector<std::string>& runtime_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& n : kRuntimes) v.push_back(n.name);
    return v;
  }();
  return names;
}

}  // namespace ddpctl
