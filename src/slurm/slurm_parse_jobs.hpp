#pragma once
// Reading jobs: squeue --json of every data parser generation
// (slurm_answer.hpp), squeue's format string, sacct -P; a state's base and
// flags as Slurm names them.
#include <string>
#include <vector>

#include "slurm/slurm_job.hpp"

namespace ddpctl {

std::vector<Job> parse_squeue_json(const std::string& text);
// Fields of kSqueueFormat, separated by the ASCII unit separator.
std::vector<Job> parse_squeue_format(const std::string& text);
// sacct -X -n -P -o with the fields of kSacctFormat.
std::vector<Job> parse_sacct(const std::string& text);

}  // namespace ddpctl
