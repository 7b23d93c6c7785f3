#pragma once
// The node check before training (`ddpctl job check`, one task per node):
// each node confirms in seconds what a DDP start needs — its GPUs visible,
// the first node's rendezvous port reachable, enough free memory — and
// records the result; `ddpctl job checked` on the batch node reads them,
// names the nodes that failed and, with requeue on, excludes them from the
// job before it is requeued (docs/running.md). The rendezvous port's part
// is master_port.hpp's.
#include <optional>
#include <string>
#include <vector>

#include "base/clock.hpp"
#include "runs/job_contract.hpp"
#include "base/process.hpp"
#include "agent/master_port.hpp"
#include "runs/node_check_record.hpp"

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

// Runs every check of one node; nvidia-smi through `runner`, the deadlines
// and the time it took on `clock`.
NodeCheckResult check_node(const NodeCheckOptions& o, CommandRunner& runner, Clock& clock);

// The GPU part alone: nvidia-smi's answer against the count Slurm gave.
std::optional<std::string> check_gpus(const std::string& node, int expected, CommandRunner& runner, std::string* note);

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

// Adds `nodes` to the job's ExcNodeList (scontrol show job / update); nullopt
// on success, else why not.
std::optional<std::string> exclude_nodes(CommandRunner& runner, const std::string& job_id, const std::vector<std::string>& nodes);

}  // namespace ddpctl
