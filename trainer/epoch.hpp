#pragma once
// One epoch of a worker's training: its steps (a stop check, micro-batches,
// the optimizer step), the epoch's statistics over every rank, validation,
// and rank 0's report, metrics record and checkpoint.
#include "worker_state.hpp"

namespace ddptrain {

// Catches the stop signals (launcher.hpp's kStopSignals): every rank then
// stops at the next step boundary, after rank 0 has checkpointed.
void catch_stop_signals();

// Trains epoch `epoch` (0-based). False when a stop was requested: rank 0
// has saved where it stopped, and every rank has met the others after it.
bool train_epoch(WorkerState& w, int epoch);

}  // namespace ddptrain
