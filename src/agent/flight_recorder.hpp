#pragma once
// What torch.distributed's Flight Recorder says about a hang (docs/running.md
// "Flight Recorder"): each rank's dump (a pickle, pickle.hpp) lists the
// collectives it entered, per process group, with their sequence numbers and
// states. The rank that never entered the collective the others are in is
// the one that holds them up ("rank 3 never entered all_reduce #1234 (process
// group 0); ranks 0–2 are in it"), the same reading as torch's own analyzer
// (fr_trace: "Not all ranks joining collective"). Pure: tested on recorded
// dumps (tests/unit/data/flight_recorder/).
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.hpp"
#include "agent/rank_evidence.hpp"
#include "agent/flight_recorder_pipe.hpp"

namespace ddpctl {

struct FrEntry {
  std::string group;       // the process group's name: "0" for the default group
  std::string group_desc;  // "default_pg", or the name the program gave it
  long long seq = 0;       // collective_seq_id (p2p_seq_id for a send/recv)
  bool p2p = false;
  std::string backend;     // "nccl", "gloo": profiling_name's prefix
  std::string op;          // "all_reduce": profiling_name without the prefix
  std::string state;       // scheduled, started, completed
  bool retired = false;
  // Finished: NCCL's events say "completed"; Gloo records without events
  // (its state stays "scheduled"), and retires an entry when its work ends.
  bool done = false;
  std::string sizes;       // the input sizes as the dump has them: "[[4]]"
  std::string where;       // the program's own frame that called it: "hang.py:10 in main"
};

struct FrDump {
  int rank = 0;
  std::string version;  // the dump format's ("2.10")
  std::map<std::string, std::vector<int>> group_ranks;  // pg_config: a group's name -> its global ranks
  std::vector<FrEntry> entries;  // in the order they were recorded
};

// A dump's dict (read_pickle's) into its entries; a std::runtime_error
// naming what is missing when it is not a Flight Recorder dump.
FrDump parse_fr_dump(const nlohmann::json& dump, int rank);
// read_pickle, then parse_fr_dump.
FrDump read_fr_dump(std::string_view pickle_bytes, int rank);

enum class FrVerdictKind {
  Named,            // ranks that never entered the collective the others are in
  Mismatch,         // the ranks are in different collectives at the same sequence number
  AllInCollective,  // every rank is in the same collective, none finished it
  NoneInCollective, // every rank finished its last collective
  NothingRecorded,  // no collective in any dump
  NoDumps,          // no dump to read
};

struct FrVerdict {
  FrVerdictKind kind = FrVerdictKind::NoDumps;
  std::vector<int> culprits;  // Named; Mismatch when a minority differs
  std::string text;           // "rank 3 (g2) never entered all_reduce #1234 (process group 0); ranks 0–2 (g1) are in it"
};

// `missing`: ranks asked for a dump that gave none (named in the text);
// `nodes`: each rank's node, where known.
FrVerdict analyze_flight_recorder(const std::vector<FrDump>& dumps, const std::vector<int>& missing = {},
                                  const std::map<int, std::string>& nodes = {});

// "rank 3", "ranks 0–2, 5", with their nodes: "ranks 0–2 (g1, g2)".
std::string describe_rank_numbers(const std::vector<int>& ranks, const std::map<int, std::string>& nodes = {});

// The stall's culprit from the Flight Recorder: when the stacks name no rank
// and the recorder does, its verdict, its ranks the culprits. nullopt: the
// stacks' verdict stands (a frame is the stronger evidence), or neither
// names a rank.
std::optional<CulpritVerdict> flight_recorder_culprit(const CulpritVerdict& stacks, const FrVerdict& fr,
                                                      const std::map<int, std::string>& nodes);

// How long the watchdog waits for the dumps, counted from its ask for the
// stacks (when the nodes' agents write the pipes), and at least
// kFlightRecorderGrace once the stacks are in. NCCL looks at its pipe every
// second (TORCH_NCCL_DUMP_ON_TIMEOUT=1); ddpctl's Gloo pipe at once. Then
// torch's first dump with stacks imports torch._inductor (sympy and ~900
// modules): 1.4-2.9 s of CPU per rank (torch 2.14, Python 3.14, an idle
// core), and every rank of a node dumps at once, beside its data loaders:
// under CI's load, two ranks' dumps did not come within 10 s.
constexpr double kFlightRecorderWait = 30;
constexpr double kFlightRecorderGrace = 2;

struct FrCollected {
  std::vector<FrDump> dumps;
  std::vector<std::string> paths;  // the dumps read, one per rank
  std::vector<int> missing;        // asked, no whole new dump within the wait
  std::vector<std::string> problems;  // "rank 2's dump ...: byte 12: ..." for one that never read
};
// Waits up to `wait_s` (polling) until every rank of `ranks` has a dump that
// differs from `before` and reads as a whole dump (NCCL writes its file in
// place: a half-written one is waited for); reads them. A rank whose Gloo
// pipe hook failed to dump writes why into <dump>.error: it is not waited
// for, and the reason is among the problems.
FrCollected collect_fr_dumps(const std::string& prefix, const std::vector<int>& ranks,
                             const std::map<int, FileId>& before, Clock& clock, double wait_s);

}  // namespace ddpctl
