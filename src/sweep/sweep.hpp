#pragma once
// `ddpctl sweep SPEC`: one run per entry of the spec's `sweep:` list,
// recorded as one experiment (experiments.hpp); `report EXPERIMENT` turns it
// into a scaling table.
#include <string>
#include <vector>

#include "slurm/context.hpp"
#include "explain/experiments.hpp"
#include "runs/output.hpp"
#include "script/resolve.hpp"
#include "slurm/slurm.hpp"
#include "sweep/sweep_request.hpp"

namespace ddpctl {

// Submits each chosen shape as its own run (the identity of `submit --shape
// LABEL`, so a shape whose run is still queued is not submitted twice), says
// per shape what happened and then the experiment's summary through `out`.
// Throws UserError when a shape could not be submitted (the others stay).
// Each shape takes its identity's lock for its own look at earlier runs and
// submission, as `submit --shape` does.
void run_sweep(const SweepRequest& request, Context& ctx, Output& out);

// The shapes of a `sweep:` list that --only picks (labels; empty: every
// shape), in the spec's order; a UserError naming a label that is no shape.
std::vector<const ResolvedShape*> chosen_shapes(const ResolvedRun& resolved, const std::vector<std::string>& only);

// `sweep:` is the old spelling of a grid of shapes (docs/sweeps.md, "Why
// one word"): for a spec that has one, the note `sweep` and `gen` print
// once, with its `include:` equivalent (the same entries, and
// `max_parallel: 1` for --one-at-a-time); "" for any other spec, or one
// whose text cannot be read.
std::string sweep_list_note(const std::string& spec_file, bool one_at_a_time);

}  // namespace ddpctl
