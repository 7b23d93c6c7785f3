#pragma once
// Checks a resolved shape against what the live cluster reports, before
// anything is queued: the partition exists, enough nodes have the GPU type,
// GPU count and CPUs, and the account is one of the user's.
#include "diagnostics.hpp"
#include "resolve.hpp"
#include "slurm.hpp"

namespace ddpctl {

// Problems name the spec's file, line and field (the shape's own where
// `alternatives:` or `sweep:` set it).
Diagnostics preflight(const ResolvedRun& run, const ResolvedShape& shape, SlurmClient& slurm);

// Every shape's problems at once; throws UserError if there are any.
void preflight_all(const ResolvedRun& run, const std::vector<const ResolvedShape*>& shapes, SlurmClient& slurm);

}  // namespace ddpctl
