#pragma once
// A Slurm job array's task list, as `sbatch --array=` takes it and as squeue
// and sacct print a collapsed record of pending tasks ("123_[4-19%4]"):
// ranges, steps, lists and the %K throttle. Model layer
// (docs/architecture.md): text in, indices out, and back.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddpctl {

struct ArrayTasks {
  std::vector<int> indices;        // ascending, each once
  std::optional<int> max_parallel;  // the %K throttle, when the text has one
};

// The most indices a task list may name before it is refused as absurd:
// Slurm's own ceiling (MaxArraySize) is at most 4,000,001.
constexpr long long kMaxArrayIndices = 10'000'000;

// Slurm's task list with or without the brackets squeue and sacct put around
// it: "4-19%4", "[4-19%4]", "1,3,5-7", "0-9:2", "7". nullopt for anything
// else, including a list Slurm cut short ("1,3,5...%2": squeue and sacct cut
// a list at 64 characters unless SLURM_BITSTR_LEN=0), a throttle of 0 and
// lists of more than kMaxArrayIndices indices. Never throws.
std::optional<ArrayTasks> parse_array_tasks(std::string_view text);

// The shortest `--array=` value for these indices (ascending, each once; a
// list that is not is sorted first) and throttle: {0,1,2,3} and 2 give
// "0-3%2", {3,7,9} "3,7,9", {0,1,2,5,6} "0-2,5-6", {0,2,4,6,8} "0-8:2".
// Empty indices give "". A max_parallel below 1 is not written.
std::string format_array(const std::vector<int>& sorted_unique_indices, std::optional<int> max_parallel);

}  // namespace ddpctl
