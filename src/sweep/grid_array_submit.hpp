#pragma once
// Submitting a grid's cells of one shape as job arrays, each below the
// site's MaxArraySize, each recorded before and after like `submit`'s
// (submit_attempt.hpp).
#include <optional>
#include <string>
#include <vector>

#include "runs/output.hpp"
#include "runs/run_store.hpp"
#include "slurm/slurm.hpp"

namespace ddpctl {

// One sbatch of an array's cells below the site's MaxArraySize: task N runs
// cell N + offset (cells 0..M-1 offset 0, M..2M-1 offset M, ...).
struct ArrayPart {
  int offset = 0;
  std::vector<int> tasks;  // ascending
};
// `cells` ascending; max_array_size 0: no limit known.
std::vector<ArrayPart> split_array(const std::vector<int>& cells, long long max_array_size);
// The site's MaxArraySize (`scontrol show config`); 0 when it cannot be read.
long long max_array_size(SlurmClient& slurm);

// Submits `cells` (ascending) of one shape as arrays, split below the
// site's MaxArraySize (max_size, 0: no limit); says each through `out`
// ("shape L: <verb> job array N ..."). Returns how many failed. `after`
// (max_parallel: 1 over several arrays: one cell of the sweep at a time):
// each array waits for the one submitted before it to end (afterany), and
// becomes the one to wait for.
int submit_grid_cells(Run& run, const RunShape& shape, const std::vector<int>& cells, std::optional<int> max_parallel,
                      long long max_size, SlurmClient& slurm, Output& out, const std::string& verb,
                      std::string* after = nullptr);

}  // namespace ddpctl
