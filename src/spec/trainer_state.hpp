#pragma once
// The bundled trainer's answer to SIGQUIT (trainer/state_dump.hpp): where a
// worker is, and the collectives it has entered and left, counted. Every
// rank runs the same collectives in the same order, so the numbers compare
// across ranks (culprit.hpp decides from them). The line's format is the
// trainer's; this is its one reader.
#include <cstdint>
#include <optional>
#include <string>

namespace ddpctl {

struct CollectiveMark {
  std::uint64_t seq = 0;  // the n-th collective of this rank; 0: none yet
  std::string name;       // "all_reduce (gradients)", as the trainer names it
};

struct TrainerState {
  std::optional<int> rank;         // "rank 1: …", "rank 1 of 4: …"
  std::string phase;               // "epoch 1, step 3 of 50: loading a batch"
  std::optional<long long> for_s;  // how long it has been there
  bool counted = false;            // the line says its collectives (an older ddp-train's does not)
  CollectiveMark entered, left;    // the last entered, the last left
  bool in_collective() const { return entered.seq > left.seq; }
};

// One answer: "ddp-train: rank 1: epoch 1, step 3 of 50: loading a batch for
// 31 s; collectives: entered #56 all_reduce (the step's start), left #56
// all_reduce (the step's start)" ("; collectives: none yet" before the
// first). nullopt for anything else ("no answer within 2 s").
std::optional<TrainerState> parse_trainer_state(const std::string& line);

}  // namespace ddpctl
