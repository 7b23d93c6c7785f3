#pragma once
// Reading nodes: sinfo --json (22.05) and scontrol show nodes --json (23.02
// and later), GRES and TRES strings.
#include <map>
#include <string>
#include <vector>

#include "slurm/slurm_job.hpp"

namespace ddpctl {

// `sinfo --json` of 22.05 (nodes); for later generations the nodes come from
// parse_scontrol_nodes_json, and this says so with a SlurmFormatError
// (sinfo_lists_nodes, slurm_answer.hpp, tells which).
std::vector<NodeInfo> parse_sinfo_json(const std::string& text);
// `scontrol show nodes --json` (23.02 and later).
std::vector<NodeInfo> parse_scontrol_nodes_json(const std::string& text);

std::map<std::string, int> parse_gres(const std::string& gres);  // "gpu:a100:4(S:0),gpu:2" -> {a100:4, "":2}
int gpus_in_tres(const std::string& tres);                          // "cpu=2,gres/gpu=4" -> 4
std::string tres_value(const std::string& tres, const std::string& key);  // ("cpu=2,mem=1G", "mem") -> "1G"

// A node list field (ExcNodeList, ReqNodeList, NodeList) of one job as
// `scontrol show job -o` prints it, expanded; empty where it is (null).
std::vector<std::string> job_node_list(const std::string& show, const std::string& key);

}  // namespace ddpctl
