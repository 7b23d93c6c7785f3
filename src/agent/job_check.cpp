#include "agent/job_check.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <optional>

#include "agent/job_events.hpp"
#include "agent/job_place.hpp"
#include "base/files.hpp"
#include "runs/fabric_record.hpp"

namespace ddpctl {

NodeCheckResult run_node_check(const NodeCheckRequest& q, Context& ctx) {
  JobPlace place = job_place(ctx.env);
  NodeCheckOptions n;
  n.node = place.node;
  n.listen = n.node == q.master_host;
  n.master_addr = q.master_addr;
  n.master_host = q.master_host;
  n.master_port = q.nodes > 1 ? q.master_port : 0;
  n.interface = q.interface;
  n.peers = q.nodes - 1;
  int gpus = q.gpus >= 0 ? q.gpus : place.gpus;
  if (gpus > 0) n.expected_gpus = gpus;
  // Half the job's memory: MemAvailable never reaches a whole-node request
  // (the kernel and slurmd hold some), while what an earlier job's stray
  // processes still hold usually takes far more.
  n.min_free_mib = q.min_free_mib >= 0 ? q.min_free_mib : place.mem_mib > 0 ? place.mem_mib / 2 : 256;
  n.deadline_s = q.deadline_s;
  n.proc_root = q.proc_root;
  NodeCheckResult r = check_node(n, ctx.runner, ctx.clock);
  write_file_atomic(node_check_path(q.log_base, place.attempt, n.node), node_check_json(r).dump() + "\n");
  return r;
}

CheckDecision read_node_checks(const std::string& log_base, const std::vector<std::string>& nodes, int max_requeues,
                               Context& ctx) {
  int attempt = job_place(ctx.env).attempt;
  std::vector<std::optional<NodeCheckResult>> results;
  for (const auto& n : nodes) {
    std::optional<NodeCheckResult> r;
    try {
      r = parse_node_check(read_file(node_check_path(log_base, attempt, n)));
    } catch (const std::exception&) {
    }
    results.push_back(r);
  }
  // The fabric check's exclusions (fabric_check.hpp) fail their nodes' checks.
  if (auto f = read_fabric_record(log_base, attempt))
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (std::find(f->exclude.begin(), f->exclude.end(), nodes[i]) == f->exclude.end()) continue;
      if (!results[i]) {
        results[i] = NodeCheckResult{};
        results[i]->node = nodes[i];
      }
      results[i]->ok = false;
      results[i]->problems.push_back({NodeProblemKind::Fabric, fmt::format("node {}: the fabric check: {}", nodes[i], f->text)});
    }
  CheckDecision d = decide_after_check(nodes, results, attempt, max_requeues);
  // The run's events (job_events.hpp): each unfit node, with its problem.
  const JobEventSource events = job_event_source(ctx.env);
  for (const auto& n : d.bad_nodes) {
    std::string why;
    for (const auto& l : d.lines)
      if (l.find(n) != std::string::npos) {
        why = l;
        break;
      }
    job_event(events, EventType::NodeCheckFailed, {{"node", n}, {"reason", why.empty() ? "no result of its check" : why}});
  }
  return d;
}

}  // namespace ddpctl
