#pragma once
// The fabric check (`fabric_check:`; docs/running.md "The fabric check"):
// before the attempt's first training step, the batch node's job agent
// times the all-reduce across the whole allocation (its spares too) with
// the bundled trainer (`ddp-train --allreduce-bench`: NCCL with the ring
// forced on GPUs, Gloo on CPUs) and compares the bus bandwidth with the
// partition's expected figure (partitions.NAME.busbw_gbs). Below the
// failure level it bisects: node pairs, round by round (node i with node
// i XOR 2^(k-1)), until a node slow with every partner, or a link slow
// between two nodes each fine with another, is named; that node (one end
// of the link) is excluded as a failed node check's is: a spare takes its
// place, else the job is requeued without it. The record is
// fabric_record.hpp's.
#include <optional>
#include <string>
#include <vector>

#include "runs/fabric_record.hpp"
#include "slurm/context.hpp"

namespace ddpctl {

struct FabricCheckRequest {
  std::string log_base;
  std::vector<std::string> nodes;   // the allocation's, in Slurm's order: the first holds rank 0
  std::string master_addr;          // nodes[0]'s address (the job's MASTER_ADDR)
  int master_port = 0;
  double expected_gbs = 0, warn_below = 0.8, fail_below = 0.5;
  std::string size = "64M";
  int iters = 5;
  double timeout_s = 60;            // each measurement's bound
  std::string trainer = "ddp-train";
  int tasks_per_node = 1;           // ranks per node: the node's GPUs, 1 on CPU nodes
  bool gpus = false;                // NCCL on the GPUs, else Gloo on the CPUs
};

// ddp-train's lines: the whole set's figure at the largest size, or each
// pair's (`pairs`), with the pairs' hosts mapped onto `nodes`.
std::vector<FabricTiming> parse_fabric_lines(const std::string& out, const std::vector<std::string>& nodes, bool pairs);

// The verdict from the measurements (the whole set's first): the level,
// the bad nodes and links, what is excluded, and the words.
void decide_fabric(FabricRecord& r);

// Runs the check through srun (ctx.runner), writes its record and event.
FabricRecord run_fabric_check(const FabricCheckRequest& q, Context& ctx);
// `job fabric`: the check once per attempt (an in-job restart's step
// reuses the attempt's record), and not where a node's check before it
// failed (that node goes first); what to print, or nullopt.
std::optional<std::string> fabric_check_once(const FabricCheckRequest& q, Context& ctx);

}  // namespace ddpctl
