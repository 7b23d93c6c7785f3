#pragma once
// Checkpoints: everything a resumed run needs to continue the same training
// (weights, momentum, the LR schedule, the loss scale, and how far into which
// epoch's sample order it got), written atomically by rank 0. The position is
// counted in samples of the epoch's global permutation (data.hpp), so any
// world size can resume it: a different one only changes how the rest of the
// epoch is split across ranks (and, without --global-batch, the global batch).
#include <optional>
#include <string>

#include "amp.hpp"
#include "model.hpp"
#include "options.hpp"

namespace ddptrain {

struct Position {
  int epoch = 0;         // 0-based epoch to run next
  long offset = 0;       // samples of that epoch's permutation already trained on, all ranks together
  long global_step = 0;  // optimizer steps since the start of training
};

// What a run trains with: the writer's values go into the checkpoint, and a
// resume compares them with its own.
struct BatchLayout {
  int world = 1, batch_size = 0, grad_accum = 1;
  long global_batch() const { return static_cast<long>(world) * batch_size * grad_accum; }
};

// A checkpoint as loaded: where to continue, and the layout that wrote it.
struct Resume {
  Position pos;
  BatchLayout writer;
  long steps_per_epoch = 0;  // the writer's optimizer steps in a whole epoch (the schedule in steps)
  // Written mid-epoch by a ddp-train before the world-size-independent order:
  // the offset is derived from its step, and the rest of that epoch follows
  // the new order.
  bool older_order = false;
};

std::string checkpoint_path(const Options& o);  // <checkpoint-dir>/checkpoint.pt
void save_checkpoint(const Options& o, Net& model, torch::optim::SGD& opt, GradScaler& scaler, const Position& pos,
                     const BatchLayout& layout, long steps_per_epoch);
// The checkpoint to continue from (nullopt when there is none); loads the
// model, optimizer and scaler state. Throws, naming the file and both values,
// when the per-rank batch size or the seed differ: another world size or
// accumulation is fine. `train_size` derives what an older checkpoint lacks.
std::optional<Resume> load_checkpoint(const Options& o, Net& model, torch::optim::SGD& opt, GradScaler& scaler,
                                      size_t train_size);
// Rank 0's account of a resume on stdout: where, from which layout, what
// changed (the global batch, the schedule in steps), and a warning for a
// checkpoint written mid-epoch by an older ddp-train.
void report_resume(const Options& o, const Resume& r, const BatchLayout& now, size_t train_size,
                   long steps_per_epoch);

}  // namespace ddptrain
