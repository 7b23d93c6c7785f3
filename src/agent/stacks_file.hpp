#pragma once
// A node's stacks file read back (job_stacks.hpp writes it): which process
// is which rank, the rank's stacks each way they were taken, its children's,
// the bundled trainer's answers; the evidence the culprit decision reads
// (culprit.hpp).
#include <string>
#include <vector>

#include "agent/rank_evidence.hpp"

namespace ddpctl {

// One node's stacks file, as `ddpctl job` writes it: a "## pid N (rank R),
// state S: ..." section per training process and way of taking its stacks
// (two for a rank taken by faulthandler and by gdb), or "pid N (rank R),
// state S: no py-spy or gdb on NODE" lines. A "(rank R, child of pid P)"
// process belongs to rank R; a "(task T, launcher)" (torchrun's agent, which
// started the node's ranks) is no rank and is left out. The bundled
// trainer's answers ("pid N: ddp-train: rank R: …") under "## where the
// bundled trainer's workers say they are (SIGQUIT)" go to the process of
// that pid.
std::vector<RankEvidence> read_stacks_file(const std::string& text, const std::string& node);

}  // namespace ddpctl
