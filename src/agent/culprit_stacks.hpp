#pragma once
// The culprit by the ranks' stacks (culprit.hpp): the rank that is not
// inside a collective while the others wait in one. Whether a thread waits
// in a collective is read against a table of frames, each with a recorded
// example in tests/unit/data/stacks/; where a rank is, from its own frames
// (and its DataLoader workers').
#include <optional>
#include <string>
#include <vector>

#include "agent/rank_evidence.hpp"
#include "agent/stack_parse.hpp"

namespace ddpctl {

// Whether a thread waits in a collective: its innermost frame that the table
// knows decides (a Gloo worker's UnboundBuffer::waitRecv under runLoop waits;
// runLoop alone is an idle worker every rank has).
struct CollectiveWait {
  std::string collective;  // "all_reduce", "a collective (c10d::Work::wait)"
  std::string frame;       // the frame that said so
};
std::optional<CollectiveWait> thread_collective(const ThreadStack& t);

// The decision over the stacks alone.
CulpritVerdict decide_by_stacks(const std::vector<RankEvidence>& ranks);

}  // namespace ddpctl
