#pragma once
// The run spec's launch: `launch:`, the bundled trainer's options (checked
// against ddp-train's own bounds) or the user's `command:`, `master:` (where
// the ranks meet), and whether a global batch divides over a shape.
#include "base/diagnostics.hpp"
#include "spec/run_spec.hpp"
#include "base/yaml_reader.hpp"

namespace ddpctl {

void read_launch(MapReader& top, RunSpec& spec);  // launch, trainer, command
void read_master(MapReader& top, RunSpec& spec);  // interface, port_range

// trainer.global_batch on `shape`: a multiple of its world size x batch_size
// within ddp-train's bound on accumulation, or ddp-train would refuse it at
// start, after the queue wait. The error names the shape's label.
void check_global_batch(const RunSpec& spec, const Shape& shape, Diagnostics& diags);

}  // namespace ddpctl
