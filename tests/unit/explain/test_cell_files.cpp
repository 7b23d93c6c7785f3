// A grid cell's files (cell_files.hpp): its metrics, read the same way for
// `report SWEEP` and `status SWEEP`, and the last one in each cell's status
// row, from files only (Slurm's answers: the real 24.11 ones of array 16,
// tests/unit/data, where task 0 is job 17, 1 is job 18 and FAILED, 2 is job
// 19, and 3 has the array's own id 16).
#include "catch.hpp"

#include <filesystem>
#include <fmt/format.h>

#include "explain/cell_files.hpp"
#include "fake_runner.hpp"
#include "base/files.hpp"
#include "fixtures.hpp"
#include "helpers.hpp"
#include "runs/job_files.hpp"
#include "runs/ledger.hpp"
#include "script/resolve.hpp"
#include "script/runs.hpp"
#include "workflows/status.hpp"
#include "runs/task_logs.hpp"

using namespace ddpctl;
using test::exits;

namespace {

// The bundled trainer's metrics line of an epoch.
std::string trainer_line(int epoch, int epochs, double val_loss) {
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

}  // namespace

TEST_CASE("cell metrics: the trainer's last epoch, the spec's metric: patterns over the rank-0 log") {
  EndedSweep f;
  RunShape shape = f.run.shapes.at(0);
  CHECK(read_cell_metrics(shape, "17").values.empty());
  CHECK_FALSE(last_metric(read_cell_metrics(shape, "17"), shape));
  write_file_atomic(job_files::metrics(f.base("17")), trainer_line(1, 3, 0.9) + trainer_line(2, 3, 0.412));
  CellMetrics m = read_cell_metrics(shape, "17");
  CHECK(m.values.at("val_loss") == 0.412);
  CHECK(m.epoch == 2);
  CHECK(m.epochs == 3);
  CHECK(m.source == job_files::metrics(f.base("17")));
  auto last = last_metric(m, shape);
  REQUIRE(last);
  CHECK(format_last_metric(*last) == "val_loss 0.412 (epoch 2)");

  SECTION("the spec's metric: names come first, without an epoch; a later attempt's match wins") {
    shape.metric = MetricSpec{{"acc=(?P<acc>[0-9.]+)"}, "rank0"};
    write_file_atomic(job_files::step_log(f.base("17"), 0, 0), "acc=0.5\nacc=0.61\n");
    write_file_atomic(job_files::step_log(f.base("17"), 1, 0), "acc=0.7\nacc=0.83\nnoise\n");
    CellMetrics p = read_cell_metrics(shape, "17");
    CHECK(p.values.at("acc") == 0.83);
    CHECK(p.values.at("val_loss") == 0.412);
    auto l = last_metric(p, shape);
    REQUIRE(l);
    CHECK(format_last_metric(*l) == "acc 0.83");
  }
  SECTION("a trainer without validation: its train_loss") {
    write_file_atomic(job_files::metrics(f.base("19")),
                      "{\"epoch\": 1, \"epochs\": 1, \"train_loss\": 0.0004321, \"world_size\": 1, \"time\": 1}\n");
    auto l = last_metric(read_cell_metrics(shape, "19"), shape);
    REQUIRE(l);
    CHECK(format_last_metric(*l) == "train_loss 4.321e-04 (epoch 1)");
  }
}

TEST_CASE("status SWEEP: each cell's row says its last metric, from its files, with no more Slurm calls") {
  EndedSweep f;
  // Without metrics files: the Slurm calls a refresh makes.
  f.status();
  size_t calls_without = f.runner.calls.size();
  f.runner.calls.clear();
  write_file_atomic(job_files::metrics(f.base("17")), trainer_line(1, 2, 0.9) + trainer_line(2, 2, 0.412));
  write_file_atomic(job_files::metrics(f.base("18")), trainer_line(1, 2, 2.5));
  write_file_atomic(job_files::metrics(f.base("16")), trainer_line(1, 2, 0.3) + trainer_line(2, 2, 0.25));
  StatusReport report = f.status();
  CHECK(f.runner.calls.size() <= calls_without);

  const StatusRow& done = f.row(report, "LR=0");
  CHECK(done.state == "COMPLETED");
  CHECK(done.info == "val_loss 0.412 (epoch 2)");
  CHECK(done.json["metric"]["name"] == "val_loss");
  CHECK(done.json["metric"]["value"] == 0.412);
  CHECK(done.json["metric"]["epoch"] == 2);
  CHECK(done.json["metric"]["epochs"] == 2);
  CHECK(done.json["metric"]["all"]["val_acc"] == 0.75);
  CHECK(done.json["metric"]["source"] == job_files::metrics(f.base("17")));
  // The failed cell: its failure in words, then its last metric.
  const StatusRow& failed = f.row(report, "LR=1");
  CHECK(failed.state == "FAILED");
  CHECK_THAT(failed.info, Catch::EndsWith("; val_loss 2.5 (epoch 1)"));
  CHECK(failed.info.size() > std::string("; val_loss 2.5 (epoch 1)").size());
  // The last task, whose own id is the array's (sacct keeps its last
  // pending reason, which status shows before it as for any job).
  CHECK_THAT(f.row(report, "LR=3").info, Catch::EndsWith("val_loss 0.25 (epoch 2)"));
  // A cell without metrics says none, and its JSON has no metric.
  const StatusRow& none = f.row(report, "LR=2");
  CHECK(none.info.find("val_loss") == std::string::npos);
  CHECK_FALSE(none.json.contains("metric"));
}
