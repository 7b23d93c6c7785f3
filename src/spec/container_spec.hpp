#pragma once
// container: the image the launcher and the ranks run in (docs/containers.md),
// as a run spec or a cluster profile writes it. Plain data: the readers are in
// spec_container.hpp, the resolution and the job script's words in container.hpp.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/diagnostics.hpp"

namespace ddpctl {

enum class ContainerRuntime { Apptainer, Singularity, Pyxis, Podman, Charliecloud };
const char* runtime_name(ContainerRuntime r);  // "apptainer", ...
std::optional<ContainerRuntime> parse_runtime(const std::string& name);
const std::vector<std::string>& runtime_names();

struct ContainerSettings {
  bool present = false;                    // the section was written
  bool off = false;                        // `container: false`: no container, the profile's default neither
  std::optional<ContainerRuntime> runtime;
  std::string image;                       // for whichever runtime runs it
  std::map<ContainerRuntime, std::string> images;  // image: {apptainer: ..., pyxis: ...}
  std::vector<std::string> mounts;         // "SRC[:DST[:ro]]"
  std::string workdir;                     // "": the submit folder
  std::vector<std::pair<std::string, std::string>> env;  // set inside the container only
  std::vector<std::string> options;        // the runtime's own options, verbatim
  std::string program;                     // the runtime's command ("" : its usual name on PATH)
  std::map<std::string, Location> where;   // "container", "container.image", ...
};

}  // namespace ddpctl
