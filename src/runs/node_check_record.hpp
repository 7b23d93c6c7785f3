#pragma once
// The node check's record (agent/node_check.hpp): what each node found
// before training, <log base>.restart<N>.check.<node>.json, which `job
// checked` decides from and status and `logs` read.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ddpctl {

// What a node's problem is: decide_after_check decides by it, never by the
// words (which may change).
enum class NodeProblemKind {
  CannotListen,  // rank 0's node cannot listen on the master port (taken)
  CannotReach,   // a node cannot reach rank 0's master port
  Gpus,          // fewer GPUs than the job was given, or nvidia-smi failing
  Memory,        // too little free memory
  Fabric,        // the fabric check named it (or one end of its slow link)
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

std::string node_check_path(const std::string& log_base, int attempt, const std::string& node);


}  // namespace ddpctl
