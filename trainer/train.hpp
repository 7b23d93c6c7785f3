#pragma once
// One rank: rendezvous, model, data, the training loop, checkpoints, metrics.
#include "options.hpp"

namespace ddptrain {

// Returns the process exit status (0, or kStoppedForRequeue after a stop).
int run_worker(const Options& o);

}  // namespace ddptrain
