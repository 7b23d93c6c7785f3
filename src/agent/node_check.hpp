#pragma once
// The node check before training (`ddpctl job check`, one task per node):
// each node confirms in seconds what a DDP start needs — its GPUs visible,
// the first node's rendezvous port reachable, enough free memory — and
// records the result; `ddpctl job checked` on the batch node reads them,
// names the nodes that failed and, with requeue on, excludes them from the
// job before it is requeued (docs/running.md). The rendezvous port's part
// is master_port.hpp's.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.hpp"
#include "runs/job_contract.hpp"
#include "base/process.hpp"
#include "agent/master_port.hpp"

namespace ddpctl {

struct NodeCheckOptions {
  std::string node;
  bool listen = false;          // this node holds rank 0: it listens on the master port
  std::string master_addr;      // where the others connect
  std::string master_host;      // the first node's name, for messages
  int master_port = 0;
  std::string interface;        // master.interface, for messages ("" : the hostname's address)
  int peers = 0;                // how many nodes connect to the listener
  std::optional<int> expected_gpus;  // the job's GPUs on this node (SLURM_GPUS_ON_NODE)
  long long min_free_mib = 0;   // MemAvailable must be at least this
  double deadline_s = 10;       // for the whole check
  std::string proc_root = "/proc";
};

// What a node's problem is: decide_after_check decides by it, never by the
// words (which may change).
enum class NodeProblemKind {
  CannotListen,  // rank 0's node cannot listen on the master port (taken)
  CannotReach,   // a node cannot reach rank 0's master port
  Gpus,          // fewer GPUs than the job was given, or nvidia-smi failing
  Memory,        // too little free memory
  Other,         // a record without a kind (older), or anything else
};
std::string node_problem_kind_name(NodeProblemKind k);  // "cannot-listen", ... (the record's)
NodeProblemKind parse_node_problem_kind(const std::string& s);  // Other for an unknown name

struct NodeProblem {
  NodeProblemKind kind = NodeProblemKind::Other;
  std::string text;  // names the node: "node g2 cannot reach ..."
  bool operator==(const NodeProblem& o) const { return kind == o.kind && text == o.text; }
};

struct NodeCheckResult {
  std::string node;
  bool ok = true;
  std::vector<NodeProblem> problems;
  std::vector<std::string> notes;     // what was confirmed
  double seconds = 0;
};

nlohmann::json node_check_json(const NodeCheckResult& r);
std::optional<NodeCheckResult> parse_node_check(const std::string& text);

// Runs every check of one node; nvidia-smi through `runner`, the deadlines
// and the time it took on `clock`.
NodeCheckResult check_node(const NodeCheckOptions& o, CommandRunner& runner, Clock& clock);

// The GPU part alone: nvidia-smi's answer against the count Slurm gave.
std::optional<std::string> check_gpus(const std::string& node, int expected, CommandRunner& runner, std::string* note);

std::string node_check_path(const std::string& log_base, int attempt, const std::string& node);

// What the batch script does after the check step: `ddpctl job checked`'s
// exit status (job_contract.hpp; templates/agent.sh.mustache).
struct CheckDecision {
  bool ok = true;
  std::vector<std::string> bad_nodes;
  std::vector<std::string> lines;  // what to print (each problem, or the summary)
  bool requeue = false;            // exclude bad_nodes and requeue
};
CheckDecision decide_after_check(const std::vector<std::string>& nodes, const std::vector<std::optional<NodeCheckResult>>& results,
                                 int attempt, int max_requeues);
AgentVerdict check_verdict(const CheckDecision& d);

// A node list field (ExcNodeList, ReqNodeList, NodeList) of one job as
// `scontrol show job -o` prints it, expanded; empty where it is (null).
std::vector<std::string> job_node_list(const std::string& show, const std::string& key);

// Adds `nodes` to the job's ExcNodeList (scontrol show job / update); nullopt
// on success, else why not.
std::optional<std::string> exclude_nodes(CommandRunner& runner, const std::string& job_id, const std::vector<std::string>& nodes);

}  // namespace ddpctl
