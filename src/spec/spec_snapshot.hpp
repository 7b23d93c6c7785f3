#pragma once
// The run spec's `snapshot:` section: the code the jobs run, copied at
// submit (docs/spec.md "Snapshot").
#include "spec/run_spec.hpp"
#include "base/yaml_reader.hpp"

namespace ddpctl {

// snapshot: false | git | {paths: [...], exclude: [...], max_mb: N}
void read_snapshot_section(MapReader& top, RunSpec& spec);

}  // namespace ddpctl
