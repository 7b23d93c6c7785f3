#pragma once
// For the unit tests of a grid's arrays (status_grid, sweep retry, the
// arrays' split): Slurm's recorded answers (tests/unit/data/<version>/,
// capture-array.sh) and a run of cells whose one array attempt made a job.
#include <string>

#include "base/files.hpp"
#include "helpers.hpp"
#include "runs/run_record.hpp"

namespace ddpctl::test {

inline std::string fixture(const std::string& version, const std::string& name) {
  return read_file(test::source_dir() + "/tests/unit/data/" + version + "/" + name);
}

// A run of `n` cells whose one array attempt made job `array_id` (--array=0-<n-1>%2).
inline Run grid_run(int n, const std::string& array_id) {
  Run run;
  run.id = "g-1";
  RunGrid grid;
  grid.keys = {{"env.LR", "LR"}};
  grid.max_parallel = 2;
  for (int i = 0; i < n; ++i) grid.cells.push_back({i, "LR=" + std::to_string(i), "1x1", "/x", {{"env.LR", std::to_string(i)}}});
  run.grid = grid;
  Attempt a;
  a.token = "tok";
  a.shape = "1x1";
  a.outcome = Outcome::Submitted;
  a.job_id = array_id;
  a.array = "0-" + std::to_string(n - 1) + "%2";
  run.attempts.push_back(a);
  return run;
}

}  // namespace ddpctl::test
