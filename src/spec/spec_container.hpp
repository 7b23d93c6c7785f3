#pragma once
// Reading `container: {runtime, image, mounts, workdir, env, options,
// program}`, in a run spec or a cluster profile (the site's default runtime
// and mounts), or `container: false` in a spec (container_spec.hpp has the
// types).
#include "spec/run_spec.hpp"
#include "base/yaml_reader.hpp"

namespace ddpctl {

// `profile`: read from a cluster profile, not a run spec.
void read_container_section(MapReader& top, ContainerSettings& c, bool profile);

}  // namespace ddpctl
