#pragma once
// For the unit tests of what reads a grid's cells back (cell_files, status
// SWEEP): a sweep of 4 cells on disk whose one array 16 ended, with Slurm's
// real 24.11 answers (tests/unit/data, where task 0 is job 17, 1 is job 18
// and FAILED, 2 is job 19, and 3 has the array's own id 16).
#include <filesystem>
#include <fmt/format.h>
#include <stdexcept>
#include <string>

#include "base/files.hpp"
#include "fake_runner.hpp"
#include "fixtures.hpp"
#include "helpers.hpp"
#include "runs/ledger.hpp"
#include "runs/task_logs.hpp"
#include "script/resolve.hpp"
#include "runs/run_store.hpp"
#include "script/run_create.hpp"
#include "status/status.hpp"

namespace ddpctl::test {

// The bundled trainer's metrics line of an epoch.
inline std::string trainer_line(int epoch, int epochs, double val_loss) {
  return fmt::format("{{\"epoch\": {}, \"epochs\": {}, \"train_loss\": 1.5, \"train_acc\": 0.5, \"val_loss\": {}, "
                     "\"val_acc\": 0.75, \"val_scope\": \"full\", \"img_per_s\": 100.0, \"epoch_s\": 2.0, "
                     "\"world_size\": 1, \"time\": 1795300000}}\n",
                     epoch, epochs, val_loss);
}

// A sweep of 4 cells on disk whose one array is 16 (ended: squeue no longer
// knows it, sacct does); `extra` is added to its spec (a metric: section).
struct EndedSweep {
  test::TempDir tmp;
  test::FakeRunner runner;
  SlurmClient slurm{runner};
  Run run;
  explicit EndedSweep(const std::string& extra = "") {
    std::string spec = test::write_one_shape_spec(tmp.path, "unit", extra);
    run = create_run(tmp.path + "/runs", load_and_resolve(spec, {}), read_file(spec), {}, "hash",
                     {{"unit.sbatch", "#!/bin/bash\n"}});
    RunGrid grid;
    grid.keys = {{"env.LR", "LR"}};
    for (int i = 0; i < 4; ++i)
      grid.cells.push_back({i, "LR=" + std::to_string(i), run.shapes.at(0).label, tmp.path + "/c" + std::to_string(i),
                            {{"env.LR", std::to_string(i)}}});
    run.grid = grid;
    save_grid(run);
    update_ledger(run, [&](std::vector<Attempt>& attempts) {
      Attempt a;
      a.token = "tok";
      a.shape = run.shapes.at(0).label;
      a.outcome = Outcome::Submitted;
      a.job_id = "16";
      a.array = "0-3";
      attempts.push_back(a);
    });
    std::filesystem::create_directories(run.shapes.at(0).output_dir);
    runner.on("squeue", {}, exits(1, "", "slurm_load_jobs error: Invalid job id specified\n"));
    runner.on("sacct", {}, exits(0, read_file(test::source_dir() + "/tests/unit/data/24.11/array-finished-sacct.txt")));
    // What explaining the failed cell may ask (its nodes' states).
    runner.on("sinfo", {}, exits(0, read_file(test::source_dir() + "/tests/unit/data/24.11/sinfo.json")));
    runner.on("scontrol", {}, exits(0, ""));
  }
  std::string base(const std::string& job_id) const { return log_base(run.shapes.at(0), job_id); }
  StatusReport status() {
    StatusRequest r;
    r.targets = {run.id};
    r.runs_root = tmp.path + "/runs";
    r.json = true;
    return collect_status(r, slurm, 1795300000);
  }
  const StatusRow& row(const StatusReport& report, const std::string& cell) {
    for (const auto& r : report.rows)
      if (r.shape == cell) return r;
    FAIL("no row for cell " << cell);
    throw std::logic_error("unreachable");
  }
};

}  // namespace ddpctl::test
