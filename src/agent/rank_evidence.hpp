#pragma once
// What the watchdog has on each rank of a stalled step (its stacks, its
// children's, the bundled trainer's own answer, its CPU), the verdict any
// culprit decision gives over it (culprit.hpp), and how ranks are named in
// the verdict's words.
#include <optional>
#include <string>
#include <vector>

#include "agent/stack_parse.hpp"
#include "spec/trainer_state.hpp"

namespace ddpctl {

// A process the rank started itself (a DataLoader worker, a forkserver):
// part of the rank, not a rank of its own.
struct ChildStacks {
  int pid = 0;
  std::vector<ThreadStack> threads;  // empty: none taken
};

// What the watchdog has on one rank (or task).
struct RankEvidence {
  int task = 0;
  std::optional<int> rank;
  std::string node;
  int pid = 0;  // 0: not known
  std::optional<TrainerState> trainer;  // the bundled trainer's own answer (SIGQUIT)
  std::vector<ThreadStack> threads;  // its process's, every way they were taken; empty: no stacks taken
  std::string no_stacks_why;         // "no py-spy or gdb on g1"
  std::vector<StackFormat> taken_by;  // how its stacks were taken (the stacks file's headings, in order); empty: not taken
  std::optional<double> cpu_pct;     // its processes' CPU (100 = a core)
  std::vector<ChildStacks> children;  // its own child processes
};

enum class CulpritKind {
  Named,             // ranks outside any collective while others wait in one
  NoStacks,          // no rank's stacks could be read
  OneRank,           // the stacks of a single rank: nothing to compare
  AllInCollective,   // every rank waits in a collective: no rank stands out by its stack
  NoneInCollective,  // no rank is in a collective: the program hangs elsewhere
};

struct CulpritRank {
  int task = 0;
  std::optional<int> rank;
  std::string node;
  std::string where;  // "hang.py:15 in on_step_end (clock_nanosleep)"
};

// What decided: each rank's stacks, or the bundled trainer's collective counters.
enum class CulpritEvidence { Stacks, TrainerCounters };

struct CulpritVerdict {
  CulpritKind kind = CulpritKind::NoStacks;
  CulpritEvidence evidence = CulpritEvidence::Stacks;
  std::vector<CulpritRank> culprits;  // Named only
  // "rank 1 (g1) is not in a collective — at hang.py:15 in on_step_end
  // (clock_nanosleep); rank 0 (g1) waits in all_reduce", or why none is named.
  std::string text;
};

// "rank 1", "task 0".
std::string rank_name(const RankEvidence& r);

// "rank 1 (g1)", "ranks 0, 2, 3 (g1, g2)", "tasks 0, 1 (g1)".
std::string describe_ranks(const std::vector<const RankEvidence*>& ranks);

// How each rank's stacks were taken: "faulthandler: ranks 0, 1 (g1); none:
// rank 2 (g2)", "faulthandler and gdb: ranks 0, 1 (g1)", in the order the ways first appear.
std::string describe_stack_sources(const std::vector<RankEvidence>& ranks);

}  // namespace ddpctl
