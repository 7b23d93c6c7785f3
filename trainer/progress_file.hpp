#pragma once
// Rank 0's progress file for `ddpctl status` ($DDPCTL_PROGRESS_FILE,
// --progress): one JSON object, the phase, epoch and step, speed and ETA,
// rewritten atomically at most 4 times a second. Best effort: a write that
// fails leaves the last one and training goes on.
#include <string>
#include <utility>

#include "clock.hpp"

namespace ddptrain {

class ProgressFile {
 public:
  // An empty `path` writes nothing (every rank but 0).
  ProgressFile(std::string path, int epochs) : path_(std::move(path)), epochs_(epochs) {}
  // `force` writes even within a quarter second of the last write.
  void update(const char* phase, int epoch, long step, long steps, double rate, double eta, bool force = false);
  // Each rank's seconds loading batches and running forward passes so far
  // (the job agent's measure of stragglers, docs/running.md).
  void set_rank_work(const double* work, int world);

 private:
  std::string path_, rank_work_;
  int epochs_;
  Clock::time_point last_ = Clock::now() - std::chrono::seconds(1);
};

}  // namespace ddptrain
