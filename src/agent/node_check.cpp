#include "agent/node_check.hpp"

#include "slurm/slurm_parse_nodes.hpp"

#include "runs/job_files.hpp"
#include "base/process.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fmt/format.h>
#include <unistd.h>

#include "base/files.hpp"
#include "base/text.hpp"

namespace ddpctl {

std::optional<std::string> check_gpus(const std::string& node, int expected, CommandRunner& runner, std::string* note) {
  // `nvidia-smi -L` lists each GPU and, under a GPU in MIG mode, its MIG
  // devices: a job given MIG slices counts those.
  CommandResult r = runner.run({"nvidia-smi", "-L"}, std::chrono::seconds(20));
  if (r.not_found) {
    if (note) *note = "no nvidia-smi: GPUs not checked";
    return std::nullopt;
  }
  if (!r.ok()) {
    // nvidia-smi prints its errors on stdout; describe() shows stderr's first
    // line where there is one, else stdout's: that line once, not twice.
    std::string first = r.out.empty() ? r.err : r.out;
    first = first.substr(0, first.find('\n'));
    std::string what = r.describe();
    if (what.find(plain_line(first)) == std::string::npos) what += ": " + printable(first, 160);
    return fmt::format("node {}: {}", node, what);
  }
  int count = 0, migs = 0;
  bool gpu_open = false;
  std::istringstream in(r.out);
  std::string line;
  auto close_gpu = [&] {
    if (gpu_open) count += migs > 0 ? migs : 1;
    gpu_open = false, migs = 0;
  };
  while (std::getline(in, line)) {
    size_t at = line.find_first_not_of(" \t");
    if (at == std::string::npos) continue;
    if (line.compare(at, 4, "GPU ") == 0) {
      close_gpu();
      gpu_open = true;
    } else if (line.compare(at, 4, "MIG ") == 0) {
      migs++;
    }
  }
  close_gpu();
  // More than the job's: a site without device cgroups (ConstrainDevices)
  // shows every GPU of the node; the job's are among them.
  if (count < expected)
    return fmt::format("node {} shows {} GPU(s), the job was given {} (gpus_per_node): a GPU is missing or has "
                       "fallen off the bus (see nvidia-smi -q and dmesg on {})",
                       node, count, expected, node);
  if (note) *note = fmt::format("{} GPU(s) visible", count);
  return std::nullopt;
}

NodeCheckResult check_node(const NodeCheckOptions& o, CommandRunner& runner, Clock& clock) {
  double start = clock.monotonic();
  NodeCheckResult r;
  r.node = o.node;
  auto problem = [&](NodeProblemKind kind, std::string p) {
    r.ok = false;
    r.problems.push_back({kind, std::move(p)});
  };
  // The rendezvous port first, on every node at once: the nodes' other
  // checks take different times (nvidia-smi without persistence mode takes
  // seconds), and a listener that started late would fail its peers.
  std::string over = o.interface.empty() ? "" : " over " + o.interface;
  if (o.listen && o.peers > 0) {
    ListenResult l = listen_for_peers(o.master_port, o.peers, o.deadline_s + 2, clock);
    if (l.problem)
      problem(NodeProblemKind::CannotListen, fmt::format("node {} (rank 0's) {}: the rendezvous would fail", o.node, *l.problem));
    else
      r.notes.push_back(fmt::format("{} of {} node(s) reached port {}", l.connected.size(), o.peers, o.master_port));
  } else if (!o.listen && o.master_port > 0) {
    if (auto why = reach_listener(o.master_addr, o.master_port, o.node, o.deadline_s, clock))
      problem(NodeProblemKind::CannotReach, fmt::format("node {} cannot reach {}:{}{} ({}, rank 0's node): {}", o.node, o.master_addr, o.master_port,
                          over, o.master_host, *why));
    else
      r.notes.push_back(fmt::format("reached {}:{}", o.master_addr, o.master_port));
  }
  if (o.expected_gpus && *o.expected_gpus > 0) {
    std::string note;
    if (auto p = check_gpus(o.node, *o.expected_gpus, runner, &note)) problem(NodeProblemKind::Gpus, *p);
    else r.notes.push_back(note);
  }
  try {
    std::string mem = read_file(o.proc_root + "/meminfo", 1 << 16);
    if (auto kib = meminfo_kib(mem, "MemAvailable")) {
      long long mib = *kib / 1024;
      if (o.min_free_mib > 0 && mib < o.min_free_mib)
        problem(NodeProblemKind::Memory, fmt::format("node {} has {} MiB of memory free, the job needs {} MiB there (other processes hold the "
                            "rest: see `ps aux --sort=-rss` on {})",
                            o.node, mib, o.min_free_mib, o.node));
      else
        r.notes.push_back(fmt::format("{} MiB free", mib));
    }
  } catch (const std::exception&) {
    r.notes.push_back("free memory not checked (no meminfo)");
  }
  r.seconds = clock.monotonic() - start;
  return r;
}

CheckDecision decide_after_check(const std::vector<std::string>& nodes,
                                 const std::vector<std::optional<NodeCheckResult>>& results, int attempt,
                                 int max_requeues) {
  CheckDecision d;
  double slowest = 0;
  std::vector<std::string> unchecked;
  for (size_t i = 0; i < nodes.size(); i++) {
    const auto& r = i < results.size() ? results[i] : std::nullopt;
    // A node where the agent could not run wrote nothing: it is not checked,
    // and the job goes on (status says what it cannot see).
    if (!r) {
      unchecked.push_back(nodes[i]);
      continue;
    }
    slowest = std::max(slowest, r->seconds);
    if (!r->ok) {
      d.ok = false;
      d.bad_nodes.push_back(nodes[i]);
      for (const auto& p : r->problems) d.lines.push_back(p.text);
    }
  }
  if (d.ok) {
    size_t checked = nodes.size() - unchecked.size();
    d.lines.push_back(fmt::format("{} node(s) ready in {:.1f} s", checked, slowest));
    if (!unchecked.empty())
      d.lines.push_back(fmt::format("not checked: {} (they wrote no result: ddpctl could not run there?)",
                                    join(unchecked, ", ")));
    return d;
  }
  // The first node could not listen (its master port taken): the others'
  // failures to reach it are only that.
  if (!results.empty() && results[0] && !results[0]->ok && nodes.size() > 1) {
    bool cannot_listen = std::any_of(results[0]->problems.begin(), results[0]->problems.end(),
                                     [](const NodeProblem& p) { return p.kind == NodeProblemKind::CannotListen; });
    if (cannot_listen) {
      d.bad_nodes = {nodes[0]};
      d.lines.clear();
      for (const auto& p : results[0]->problems) d.lines.push_back(p.text);
      d.requeue = attempt < max_requeues;
      return d;
    }
  }
  // Every other node unable to reach the first one (3 nodes or more): the
  // first node is the one that does not accept connections.
  bool all_peers_unreachable = nodes.size() >= 3 && d.bad_nodes.size() == nodes.size() - 1 &&
                               std::find(d.bad_nodes.begin(), d.bad_nodes.end(), nodes[0]) == d.bad_nodes.end();
  if (all_peers_unreachable) {
    bool reach_only = true;
    for (size_t i = 1; i < nodes.size(); i++)
      if (results[i])
        for (const auto& p : results[i]->problems) reach_only = reach_only && p.kind == NodeProblemKind::CannotReach;
    if (reach_only) {
      d.lines.push_back(fmt::format("no node could reach {}: it is {} that does not accept connections", nodes[0], nodes[0]));
      d.bad_nodes = {nodes[0]};
    }
  }
  // Every node failing says more about the job (or the master) than the
  // nodes, unless there is only one.
  d.requeue = attempt < max_requeues && (d.bad_nodes.size() < nodes.size() || nodes.size() == 1);
  return d;
}

AgentVerdict check_verdict(const CheckDecision& d) {
  return d.ok ? AgentVerdict::Go : d.requeue ? AgentVerdict::Requeue : AgentVerdict::Fail;
}

std::optional<std::string> exclude_nodes(CommandRunner& runner, const std::string& job_id,
                                         const std::vector<std::string>& nodes) {
  CommandResult show = runner.run({"scontrol", "show", "job", "-o", job_id}, std::chrono::seconds(30));
  if (!show.ok()) return show.describe();
  std::vector<std::string> all = job_node_list(show.out, "ExcNodeList"),
                           required = job_node_list(show.out, "ReqNodeList");
  for (const auto& n : nodes)
    if (std::find(all.begin(), all.end(), n) == all.end()) all.push_back(n);
  std::vector<std::string> argv = {"scontrol", "update", "JobId=" + job_id, "ExcNodeList=" + join(all, ",")};
  // A node the job asked for by name (nodelist:) cannot also be excluded:
  // it leaves the required list, and Slurm picks another in its place.
  std::vector<std::string> kept;
  for (const auto& n : required)
    if (std::find(nodes.begin(), nodes.end(), n) == nodes.end()) kept.push_back(n);
  if (kept.size() != required.size()) argv.push_back("ReqNodeList=" + join(kept, ","));
  CommandResult upd = runner.run(argv, std::chrono::seconds(30));
  if (!upd.ok()) return upd.describe();
  return std::nullopt;
}

}  // namespace ddpctl
