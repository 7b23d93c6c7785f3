// The scaling table `report SWEEP` makes of a grid whose cells vary the
// shape (report_grid_collect.hpp), row by row: a row per cell from its task's
// files and Slurm's record of it, a failed cell explained, a pending one
// without numbers, ends kept in the ledger, and cells of one array with their
// own ranks per node. Slurm's answers are the captured 24.11 sacct lines of a
// finished array (tests/unit/data/24.11/array-finished-sacct.txt), with the
// node counts and times of the shapes here.
#include <algorithm>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "catch.hpp"

#include "fake_runner.hpp"
#include "base/files.hpp"
#include "fixtures.hpp"
#include "grid_scaling_fixture.hpp"
#include "helpers.hpp"
#include "runs/job_files.hpp"
#include "report/report_grid_collect.hpp"
#include "explain/report_table.hpp"
#include "runs/run_store.hpp"

using namespace ddpctl;

TEST_CASE("report of a grid of shapes: the scaling table, a row per cell from its task's metrics and sacct",
          "[report_grid_scaling]") {
  test::TempDir dir;
  Run run = test::scaling_run(dir.path, test::kShapeKeys, {{"1", "1"}, {"1", "2"}, {"2", "1"}}, test::kShapes, 40);
  test::write_trainer_metrics(run, "1x1", "40", 100, 1);
  test::write_trainer_metrics(run, "1x2", "41", 180, 2);
  test::write_trainer_metrics(run, "2x1", "42", 150, 2);
  test::FakeRunner runner;
  // squeue no longer knows the arrays; sacct does (one call for all three).
  runner.on("squeue", {"--json"}, test::exits(1, "", "slurm_load_jobs error: Invalid job id specified\n"));
  runner.on("sacct", {}, test::exits(0, test::sacct_line(40, 0, "COMPLETED", 1, "2026-11-26T07:02:23", "2026-11-26T07:04:03") +
                                         test::sacct_line(41, 1, "COMPLETED", 1, "2026-11-26T07:04:04", "2026-11-26T07:05:04") +
                                         test::sacct_line(42, 2, "COMPLETED", 2, "2026-11-26T07:05:05", "2026-11-26T07:06:15")));
  SlurmClient slurm(runner);
  test::RecordingOutput out;
  GridReports r = collect_grid_reports(run, slurm, {}, out, 1795700000);
  CHECK(runner.count("squeue") == 1);
  CHECK(runner.count("sacct") == 1);
  REQUIRE(r.kind == GridReportKind::Scaling);
  REQUIRE(r.scaling.size() == 1);
  CHECK(r.scaling[0].title.empty());
  const auto& rows = r.scaling[0].rows;
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].label == "1x1");
  CHECK(rows[1].label == "1x2");
  CHECK(rows[2].label == "2x1");
  CHECK(rows[0].job_id == "40_0");
  CHECK(rows[2].job_id == "42_2");
  CHECK(rows[0].run_id == run.id);
  // The metrics file its task's own job id names: the mean after the first epoch.
  CHECK(*rows[0].img_per_s == Approx(100));
  CHECK(*rows[1].img_per_s == Approx(180));
  CHECK(*rows[1].speedup == Approx(1.8));
  CHECK(*rows[1].efficiency == Approx(0.9));
  CHECK(*rows[2].speedup == Approx(1.5));
  CHECK(*rows[2].efficiency == Approx(0.75));
  CHECK(rows[1].world() == 2);
  // Slurm's start and end, its node count; memory from the metrics file.
  CHECK(*rows[0].wall_s == Approx(100));
  CHECK(rows[0].wall_source == "slurm");
  CHECK(*rows[2].wall_s == Approx(70));
  CHECK(*rows[2].node_hours == Approx(70.0 / 3600 * 2));
  CHECK_FALSE(rows[2].gpu_hours);
  CHECK(*rows[1].mem0_peak == Approx(300));
  CHECK(*rows[1].mem_max == Approx(310));
  CHECK(*rows[0].state == JobState::Completed);
  // Printed exactly as an experiment's report.
  std::vector<std::string> warnings;
  std::string table = format_grid_reports(r, "table", warnings);
  CHECK(table == report_table(rows));
  CHECK(table.find("SHAPE  RUN") == 0);
  CHECK(table.find("throughput: mean over epochs after the first; speedup and efficiency vs the fewest ranks") !=
        std::string::npos);
  CHECK(format_grid_reports(r, "markdown", warnings).find("| 2 nodes × 1 rank | 2 | 0 | 150.0 | 1.50× | 75% |") !=
        std::string::npos);
  CHECK(format_grid_reports(r, "csv", warnings) == report_csv(rows));
  nlohmann::json j = nlohmann::json::parse(format_grid_reports(r, "json", warnings));
  REQUIRE(j.is_array());
  CHECK(j[1]["shape"] == "1x2");
  CHECK(j[1]["job"] == "41_1");
  CHECK(warnings.empty());

  SECTION("the options of the report by parameter are refused, saying why") {
    std::string e = test::user_error_of(
        [&] { collect_grid_reports(run, slurm, {std::nullopt, parse_best("val_loss:min")}, out, 1795700000); });
    CHECK(e.find("--best") != std::string::npos);
    CHECK(e.find("varies the shape alone") != std::string::npos);
  }
}

TEST_CASE("report of a grid of shapes: a failed cell is explained, a pending one has no numbers, ends kept in the "
          "ledger cost no Slurm call",
          "[report_grid_scaling]") {
  test::TempDir dir;
  Run run = test::scaling_run(dir.path, test::kShapeKeys, {{"1", "1"}, {"1", "2"}, {"2", "1"}}, test::kShapes, 40);
  test::write_trainer_metrics(run, "1x1", "40", 100, 1);
  test::write_trainer_metrics(run, "1x2", "41", 180, 2);
  SECTION("ended cells in the ledger; the third pending in its array's collapsed record") {
    test::FakeRunner runner;
    // The first two ended, and their ends are kept in the ledger.
    for (int i = 0; i < 2; ++i) {
      JobEnd end;
      end.job.id = std::to_string(40 + i);
      end.job.array_job_id = std::to_string(40 + i);
      end.job.array_task_id = i;
      end.job.state = i == 0 ? JobState::Completed : JobState::Failed;
      end.job.exit = {3, std::nullopt};
      if (i == 0) end.job.exit = {0, std::nullopt};
      end.job.start_time = 1795300000;
      end.job.end_time = 1795300000 + (i == 0 ? 100 : 60);
      end.job.node_count = 1;
      run.attempts[static_cast<size_t>(i)].task_ends.push_back(end);
      run.attempts[static_cast<size_t>(i)].end = end;
    }
    // The third cell's array is pending, all of its tasks in one collapsed
    // record: 24.11's captured answer for array 12 (12_[0-5%2]).
    run.attempts[2].job_id = "12";
    runner.on("squeue", {"--json"},
              test::exits(0, read_file(test::source_dir() + "/tests/unit/data/24.11/array-pending-squeue.json")));
    SlurmClient slurm(runner);
    test::RecordingOutput out;
    GridReports r = collect_grid_reports(run, slurm, {}, out, 1795700000);
    REQUIRE(runner.count("squeue") == 1);
    CHECK(runner.count("sacct") == 0);  // squeue showed the one cell not ended
    // Only the array not ended is asked about.
    std::string asked;
    for (const auto& c : runner.calls)
      if (std::find(c.begin(), c.end(), "squeue") != c.end()) asked = fmt::format("{}", fmt::join(c, " "));
    INFO(asked);
    CHECK(asked.find("12") != std::string::npos);
    CHECK(asked.find("40") == std::string::npos);
    CHECK(asked.find("41") == std::string::npos);
    const auto& rows = r.scaling.at(0).rows;
    REQUIRE(rows.size() == 3);
    CHECK(rows[2].job_id == "12_2");
    CHECK(*rows[2].state == JobState::Pending);
    CHECK_FALSE(rows[2].img_per_s);
    CHECK(rows[2].problem.find("not started yet") != std::string::npos);
    CHECK(*rows[0].wall_s == Approx(100));
    CHECK(*rows[1].state == JobState::Failed);
    CHECK(rows[1].failure.find("exit code 3") != std::string::npos);
    CHECK(*rows[1].speedup == Approx(1.8));  // what it measured before it failed
    std::string table = report_table(rows);
    CHECK(table.find("1x2 (local-sweep-20261126): failed: ") != std::string::npos);
  }
}

TEST_CASE("report of a grid of shapes: cells that ended without metrics show what they have, none started is an error",
          "[report_grid_scaling]") {
  test::TempDir dir;
  SECTION("cells that ended without metrics: what they have (times, node-hours), each saying how to add metrics") {
    Run bare = test::scaling_run(dir.path + "/none", test::kShapeKeys, {{"1", "1"}, {"2", "1"}}, {test::kShapes[0], test::kShapes[2]}, 50);
    test::FakeRunner runner;
    runner.on("squeue", {"--json"}, test::exits(1, "", "slurm_load_jobs error: Invalid job id specified\n"));
    runner.on("sacct", {}, test::exits(0, test::sacct_line(50, 0, "COMPLETED", 1, "2026-11-26T07:02:23", "2026-11-26T07:04:03") +
                                           test::sacct_line(51, 1, "COMPLETED", 2, "2026-11-26T07:04:04", "2026-11-26T07:05:04")));
    SlurmClient slurm(runner);
    test::RecordingOutput out;
    GridReports r = collect_grid_reports(bare, slurm, {}, out, 1795700000);
    const auto& rows = r.scaling.at(0).rows;
    REQUIRE(rows.size() == 2);
    CHECK(*rows[0].wall_s == Approx(100));
    CHECK(*rows[1].node_hours == Approx(60.0 / 3600 * 2));
    for (const auto& row : rows) {
      INFO(row.problem);
      CHECK(row.problem.find("ended without metrics") == 0);
      CHECK(row.problem.find("$DDPCTL_METRICS_FILE") != std::string::npos);
    }
    // The table shows the columns the rows have, and says once which it left out.
    std::string table = report_table(rows);
    INFO(table);
    std::string header = table.substr(0, table.find('\n'));
    CHECK(header.find("WALL") != std::string::npos);
    CHECK(header.find("NODE-H") != std::string::npos);
    CHECK(header.find("IMG/S") == std::string::npos);
    CHECK(table.find("not shown, no run has them: EPOCH, TRAIN LOSS/ACC, VAL LOSS/ACC, IMG/S, SPEEDUP, EFF, MFU, GPU-H") !=
          std::string::npos);
    CHECK(table.find("throughput:") == std::string::npos);
    std::string md = report_markdown(rows);
    INFO(md);
    CHECK(md.find("| Setup | Ranks | GPUs | Time | Node-hours |") == 0);
    CHECK(md.find("Not shown, no run has them: Throughput (img/s), Speedup") != std::string::npos);
  }
  SECTION("no cell has started: the error an experiment's report gives") {
    Run bare = test::scaling_run(dir.path + "/none", test::kShapeKeys, {{"1", "1"}, {"2", "1"}}, {test::kShapes[0], test::kShapes[2]}, 50);
    test::FakeRunner runner;
    runner.on("squeue", {"--json"}, test::exits(1, "", "slurm_load_jobs error: Invalid job id specified\n"));
    runner.on("sacct", {}, test::exits(0, ""));
    SlurmClient slurm(runner);
    test::RecordingOutput out;
    std::string e = test::user_error_of([&] { collect_grid_reports(bare, slurm, {}, out, 1795700000); });
    CHECK(e.find("no metrics in any of the runs yet") != std::string::npos);
  }
}

TEST_CASE("report of a grid of shapes: cells of one array (the same #SBATCH lines) keep their own ranks per node",
          "[report_grid_scaling]") {
  test::TempDir dir;
  // procs_per_node 1 and 2 of a CPU spec whose script starts the ranks
  // itself: one array, recorded with the first cell's shape (1x1).
  Run run = test::scaling_run(dir.path, {{"procs_per_node", "procs_per_node"}}, {{"1"}, {"2"}}, {test::kShapes[0]}, 70);
  run.attempts[1].job_id = "70";
  run.attempts[0].array = run.attempts[1].array = "0-1%1";
  run.attempts.pop_back();
  test::write_trainer_metrics(run, "1x1", "71", 100, 1);
  test::write_trainer_metrics(run, "1x1", "70", 190, 2);
  test::FakeRunner runner;
  runner.on("squeue", {"--json"}, test::exits(1, "", "slurm_load_jobs error: Invalid job id specified\n"));
  runner.on("sacct", {}, test::exits(0, fmt::format("70_0|local-sweep|ddpctl:tok70|COMPLETED|None|cpu|root|g1|"
                                                    "2026-11-26T07:02:22|2026-11-26T07:02:23|2026-11-26T07:04:03|10|1|"
                                                    "billing=1,cpu=1,mem=1G,node=1|billing=1,cpu=1,mem=1G,node=1|0:0|"
                                                    "/tmp/ddpctl-capture-array.2ePYYl|71\n") +
                                            test::sacct_line(70, 1, "COMPLETED", 1, "2026-11-26T07:04:04", "2026-11-26T07:05:04")));
  SlurmClient slurm(runner);
  test::RecordingOutput out;
  GridReports r = collect_grid_reports(run, slurm, {}, out, 1795700000);
  const auto& rows = r.scaling.at(0).rows;
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].label == "1x1");
  CHECK(rows[0].world() == 1);
  CHECK(rows[1].label == "1x2");
  CHECK(rows[1].world() == 2);
  CHECK(*rows[1].speedup == Approx(1.9));
  CHECK(*rows[1].efficiency == Approx(0.95));
}
