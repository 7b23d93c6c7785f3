#pragma once
// Parsers for what Slurm prints, exposed for SlurmClient and the unit tests.
// The JSON ones throw SlurmAnswerError for Slurm's own errors and
// nlohmann::json exceptions for unreadable text.
#include <map>
#include <string>
#include <vector>

#include "slurm.hpp"

namespace ddpctl {

std::vector<Job> parse_squeue_json(const std::string& text);
std::vector<Job> parse_squeue_format(const std::string& text);
std::vector<Job> parse_sacct(const std::string& text);
std::vector<NodeInfo> parse_sinfo_json(const std::string& text);
std::map<std::string, int> parse_gres(const std::string& gres);  // "gpu:a100:4(S:0),gpu:2" -> {a100:4, "":2}
int gpus_in_tres(const std::string& tres);                          // "cpu=2,gres/gpu=4" -> 4

}  // namespace ddpctl
