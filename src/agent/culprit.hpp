#pragma once
// Who hung the job: the rank that is not inside a collective while the
// others wait in one (docs/running.md). A pure decision over each rank's
// stacks as the watchdog recorded them (gdb, py-spy, Python's faulthandler),
// so every frame it knows is tested on a recorded example
// (tests/unit/data/stacks/). The bundled trainer says itself how far each
// rank got (its collectives, counted: trainer_state.hpp); where it does, that
// decides. Output timing is no evidence: the rank that hangs is often the
// last to print.
// The decision by the stacks is culprit_stacks.hpp's, by the counters
// culprit_collectives.hpp's; the stacks file is read by stacks_file.hpp.
#include <vector>

#include "agent/rank_evidence.hpp"

namespace ddpctl {

// The counters decide when they name a culprit: they are exact (each rank
// says which collective it reached), where stacks are read against a table
// of frames; ddp-train's gradient allreduce runs from autograd hooks inside
// backward, and a rank stuck in backward's compute is not told apart by its
// stack. Otherwise a culprit the stacks name, and the counters' account is
// added; naming nobody, the counters' account comes first.
CulpritVerdict decide_culprit(const std::vector<RankEvidence>& ranks);

}  // namespace ddpctl
