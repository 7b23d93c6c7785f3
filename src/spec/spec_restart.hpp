#pragma once
// A job that starts again: `requeue:` (the whole job, queued again by Slurm)
// and `restart:` (its training step, inside the job), read, then checked
// against each shape.
#include "base/diagnostics.hpp"
#include "spec/run_spec.hpp"
#include "base/yaml_reader.hpp"

namespace ddpctl {

void read_requeue(MapReader& top, RunSpec& spec);
// restart: {in_job, spares, min_nodes}; after read_running_sections (it
// needs the monitor).
void read_restart(MapReader& top, RunSpec& spec);

// restart: on `shape`: the bundled trainer resumes on a restart, and
// restart.min_nodes is at most the shape's nodes, with a global_batch that
// every shrunk world size keeps.
void check_restart(const RunSpec& spec, const Shape& shape, Diagnostics& diags);

}  // namespace ddpctl
