#pragma once
// The culprit by the bundled trainer's collective counters (culprit.hpp,
// trainer_state.hpp). Every rank enters the same collectives in the same
// order, and an allreduce (most of them) ends for no rank until every rank
// has entered it: while some ranks wait in #N, a rank that never entered #N
// is what they wait for. Exact where the stacks are a reading of frames.
#include <optional>
#include <vector>

#include "agent/rank_evidence.hpp"

namespace ddpctl {

// The decision over the counters alone: nullopt when fewer than two ranks
// gave them. A rank that has not entered the collective the others wait in
// (#N) is named: "rank 1 (g1) never entered
// collective #57 all_reduce (gradients) — it left #56, at "epoch 1, step 3
// of 50: loading a batch" for 31 s; ranks 0, 2, 3 (g1, g2) wait in #57".
std::optional<CulpritVerdict> decide_by_collectives(const std::vector<RankEvidence>& ranks);

}  // namespace ddpctl
