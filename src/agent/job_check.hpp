#pragma once
// `ddpctl job check` and `ddpctl job checked`: this node's check before the
// training step (node_check.hpp decides), recorded where the first node
// reads every node's record of the attempt, and what to do with them.
#include <string>
#include <vector>

#include "agent/node_check.hpp"
#include "slurm/context.hpp"

namespace ddpctl {

// `job check`: this node's check (node_check.hpp) from the options and
// Slurm's variables, recorded in <log base>.restart<A>.check.<node>.json.
struct NodeCheckRequest {
  std::string log_base, master_addr, master_host, interface;
  int master_port = 0, nodes = 1;
  int gpus = -1;                // -1: SLURM_GPUS_ON_NODE
  long long min_free_mib = -1;  // -1: half of SLURM_MEM_PER_NODE, else 256
  double deadline_s = 10;
  std::string proc_root = "/proc";
};
NodeCheckResult run_node_check(const NodeCheckRequest& r, Context& ctx);
// `job checked`: every node's record of this attempt, and what to do.
CheckDecision read_node_checks(const std::string& log_base, const std::vector<std::string>& nodes, int max_requeues,
                               Context& ctx);

}  // namespace ddpctl
