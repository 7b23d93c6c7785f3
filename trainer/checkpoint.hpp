#pragma once
// Checkpoints: everything a resumed run needs to continue the same loss
// curve (weights, momentum, the LR schedule, the loss scale, and where in
// which epoch's sample order it stopped), written atomically by rank 0.
// Shape-independent: any nodes x GPUs with the same world size can load it.
#include <string>

#include "amp.hpp"
#include "model.hpp"
#include "options.hpp"

namespace ddptrain {

struct Position {
  int epoch = 0;   // 0-based epoch to run next
  long step = 0;   // optimizer steps already done in that epoch
};

std::string checkpoint_path(const Options& o);  // <checkpoint-dir>/checkpoint.pt
void save_checkpoint(const Options& o, Net& model, torch::optim::SGD& opt, GradScaler& scaler, const Position& pos,
                     int world);
// The position to continue from ({} when there is no checkpoint); throws when
// the checkpoint's world size, batch size, accumulation or seed differ.
Position load_checkpoint(const Options& o, Net& model, torch::optim::SGD& opt, GradScaler& scaler, int world);

}  // namespace ddptrain
