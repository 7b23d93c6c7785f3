#pragma once
// Who hung the job: the rank that is not inside a collective while the
// others wait in one (docs/running.md). A pure decision over each rank's
// stacks as the watchdog recorded them (gdb, py-spy, Python's faulthandler),
// so every frame it knows is tested on a recorded example
// (tests/unit/data/stacks/). The bundled trainer says itself how far each
// rank got (its collectives, counted: trainer_state.hpp); where it does, that
// decides. Output timing is no evidence: the rank that hangs is often the
// last to print.
#include <optional>
#include <string>
#include <vector>

#include "spec/trainer_state.hpp"

namespace ddpctl {

enum class StackFormat { Gdb, PySpy, Faulthandler };
std::string stack_format_name(StackFormat f);  // "gdb", "py-spy", "faulthandler"

struct StackFrame {
  std::string function;  // "on_step_end", "c10d::Work::wait", "??"
  std::string file;      // "hang.py", "/usr/lib/.../libgloo.so.0"; "" when unknown
  int line = 0;          // 0: unknown
  bool python = false;   // a Python frame (py-spy, faulthandler), else native (gdb)
};

struct ThreadStack {
  StackFormat format = StackFormat::Gdb;
  std::string name;   // "Thread 1 (LWP 17721 \"python3\")", "MainThread"
  bool main = false;  // the process's main thread (gdb's thread 1; a Python stack ending in <module>)
  std::vector<StackFrame> frames;  // innermost first
};

// Each format's parser reads only its own lines, so a text holding several
// (a rank's faulthandler dump and its gdb backtrace) is read by all three.
std::vector<ThreadStack> parse_gdb_stacks(const std::string& text);
std::vector<ThreadStack> parse_py_spy_stacks(const std::string& text);
std::vector<ThreadStack> parse_faulthandler_stacks(const std::string& text);
std::vector<ThreadStack> parse_stacks(const std::string& text);

// Whether a thread waits in a collective: its innermost frame that the table
// knows decides (a Gloo worker's UnboundBuffer::waitRecv under runLoop waits;
// runLoop alone is an idle worker every rank has).
struct CollectiveWait {
  std::string collective;  // "all_reduce", "a collective (c10d::Work::wait)"
  std::string frame;       // the frame that said so
};
std::optional<CollectiveWait> thread_collective(const ThreadStack& t);

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

// The counters decide when they name a culprit: they are exact (each rank
// says which collective it reached), where stacks are read against a table
// of frames; ddp-train's gradient allreduce runs from autograd hooks inside
// backward, and a rank stuck in backward's compute is not told apart by its
// stack. Otherwise a culprit the stacks name, and the counters' account is
// added; naming nobody, the counters' account comes first.
CulpritVerdict decide_culprit(const std::vector<RankEvidence>& ranks);

// The decision over the counters alone (culprit_collectives.cpp): nullopt
// when fewer than two ranks gave them. A rank that has not entered the
// collective the others wait in (#N) is named: "rank 1 (g1) never entered
// collective #57 all_reduce (gradients) — it left #56, at "epoch 1, step 3
// of 50: loading a batch" for 31 s; ranks 0, 2, 3 (g1, g2) wait in #57".
std::optional<CulpritVerdict> decide_by_collectives(const std::vector<RankEvidence>& ranks);
// The decision over the stacks alone.
CulpritVerdict decide_by_stacks(const std::vector<RankEvidence>& ranks);

// "rank 1 (g1)", "ranks 0, 2, 3 (g1, g2)", "tasks 0, 1 (g1)".
std::string describe_ranks(const std::vector<const RankEvidence*>& ranks);

// How each rank's stacks were taken: "faulthandler: ranks 0, 1 (g1); none:
// rank 2 (g2)", "faulthandler and gdb: ranks 0, 1 (g1)", in the order the ways first appear.
std::string describe_stack_sources(const std::vector<RankEvidence>& ranks);

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
