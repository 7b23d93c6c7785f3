// Shapes as one more axis of a grid: `report SWEEP` of a grid whose cells
// vary the shape makes the scaling table a `sweep:` experiment's report
// makes (report.hpp; its rows: test_report_grid_scaling_rows.cpp); a grid
// that also varies other keys keeps its table by parameter and adds a
// scaling table per combination of them, and a grid of shapes named with
// other runs is one scaling table of them all. Slurm's
// answers are the captured 24.11 sacct lines of a finished array
// (tests/unit/data/24.11/array-finished-sacct.txt), with the node counts
// and times of the shapes here. (The note for the old `sweep:` spelling and
// max_parallel: 1 over several arrays: tests/unit/sweep/test_sweep_grid_shapes.cpp.)
#include <algorithm>
#include <filesystem>
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
#include "explain/parameter_table.hpp"
#include "runs/run_store.hpp"

using namespace ddpctl;
namespace fs = std::filesystem;

TEST_CASE("grid report kind: by parameter, the scaling table of a grid of shapes, or both", "[report_grid_scaling]") {
  CHECK(is_shape_key("nodes"));
  CHECK(is_shape_key("procs_per_node"));
  CHECK(is_shape_key("gpus_per_node"));
  CHECK(is_shape_key("cpus_per_task"));
  CHECK_FALSE(is_shape_key("trainer.lr"));
  CHECK_FALSE(is_shape_key("env.NODES"));
  RunGrid g;
  g.keys = {{"trainer.lr", "lr"}, {"trainer.seed", "seed"}};
  CHECK(grid_report_kind(g) == GridReportKind::ByParameter);
  g.keys = test::kShapeKeys;
  CHECK(grid_report_kind(g) == GridReportKind::Scaling);
  g.keys.push_back({"trainer.lr", "lr"});
  CHECK(grid_report_kind(g) == GridReportKind::Both);
}

TEST_CASE("report of a grid over shapes and lr: the table by parameter, and a scaling table per lr",
          "[report_grid_scaling]") {
  test::TempDir dir;
  std::vector<std::pair<std::string, std::string>> keys = {{"nodes", "nodes"}, {"trainer.lr", "lr"}};
  // nodes [1, 2] x lr [0.1, 0.01]; the first key slowest: 1x1 lr=0.1, 1x1 lr=0.01, 2x1 lr=0.1, 2x1 lr=0.01.
  Run run = test::scaling_run(dir.path, keys, {{"1", "0.1"}, {"1", "0.01"}, {"2", "0.1"}, {"2", "0.01"}},
                        {{"1x1", 1, 1}, {"1x1", 1, 1}, {"2x1", 2, 1}, {"2x1", 2, 1}}, 60);
  run.shapes.erase(run.shapes.begin() + 3);
  run.shapes.erase(run.shapes.begin() + 1);
  test::write_trainer_metrics(run, "1x1", "60", 100, 1);
  test::write_trainer_metrics(run, "1x1", "61", 120, 1);
  test::write_trainer_metrics(run, "2x1", "62", 160, 2);
  test::write_trainer_metrics(run, "2x1", "63", 180, 2);
  test::FakeRunner runner;
  runner.on("squeue", {"--json"}, test::exits(1, "", "slurm_load_jobs error: Invalid job id specified\n"));
  runner.on("sacct", {}, test::exits(0, test::sacct_line(60, 0, "COMPLETED", 1, "2026-11-26T07:02:23", "2026-11-26T07:04:03") +
                                         test::sacct_line(61, 1, "COMPLETED", 1, "2026-11-26T07:04:04", "2026-11-26T07:05:04") +
                                         test::sacct_line(62, 2, "COMPLETED", 2, "2026-11-26T07:05:05", "2026-11-26T07:06:15") +
                                         test::sacct_line(63, 3, "COMPLETED", 2, "2026-11-26T07:06:16", "2026-11-26T07:07:16")));
  SlurmClient slurm(runner);
  test::RecordingOutput out;
  GridReports r = collect_grid_reports(run, slurm, {std::nullopt, parse_best("val_loss:min")}, out, 1795700000);
  CHECK(runner.count("squeue") == 1);
  CHECK(runner.count("sacct") == 1);
  REQUIRE(r.kind == GridReportKind::Both);
  CHECK(r.by_parameter.cells.size() == 4);
  CHECK(r.by_parameter.keys == std::vector<std::string>{"nodes", "lr"});
  REQUIRE(r.scaling.size() == 2);
  CHECK(r.scaling[0].title == "lr=0.1");
  CHECK(r.scaling[1].title == "lr=0.01");
  REQUIRE(r.scaling[0].rows.size() == 2);
  // Each table against its own fewest ranks: 160/100 and 180/120.
  CHECK(*r.scaling[0].rows[1].speedup == Approx(1.6));
  CHECK(*r.scaling[1].rows[1].speedup == Approx(1.5));
  CHECK(*r.scaling[1].rows[1].efficiency == Approx(0.75));
  CHECK(r.scaling[1].rows[0].job_id == "61_1");

  std::vector<std::string> warnings;
  std::string table = format_grid_reports(r, "table", warnings);
  CHECK(table.find(grid_report_table(r.by_parameter)) == 0);
  CHECK(table.find("\nscaling at lr=0.1\nSHAPE  RUN") != std::string::npos);
  CHECK(table.find("\nscaling at lr=0.01\nSHAPE  RUN") != std::string::npos);
  std::string md = format_grid_reports(r, "markdown", warnings);
  CHECK(md.find("### scaling at lr=0.01") != std::string::npos);
  CHECK(md.find("| 2 nodes × 1 rank | 2 | 0 | 180.0 | 1.50× | 75% |") != std::string::npos);
  nlohmann::json j = nlohmann::json::parse(format_grid_reports(r, "json", warnings));
  CHECK(j["cells"].size() == 4);
  REQUIRE(j["scaling"].size() == 2);
  CHECK(j["scaling"][1]["values"]["lr"] == "0.01");
  CHECK(j["scaling"][1]["rows"][1]["speedup"].get<double>() == Approx(1.5));
  CHECK(warnings.empty());
  CHECK(format_grid_reports(r, "csv", warnings) == grid_report_csv(r.by_parameter));
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("scaling tables") != std::string::npos);
}

TEST_CASE("a grid of shapes named with other runs is one scaling table of them all, a grid by parameter is not",
          "[report_grid_scaling]") {
  test::TempDir root;
  Run plain = test::make_local_cpu_run(root.path);
  Run shapes = test::make_local_cpu_run(root.path);
  shapes.grid = test::scaling_run(root.path, test::kShapeKeys, {{"1", "1"}, {"2", "1"}}, {test::kShapes[0], test::kShapes[2]}, 80).grid;
  save_grid(shapes);
  CHECK_FALSE(grid_run_of({plain.id, shapes.id}, root.path));  // collect_report takes them both
  auto alone = grid_run_of({shapes.id}, root.path);
  REQUIRE(alone);
  CHECK(grid_report_kind(*alone->grid) == GridReportKind::Scaling);
  Run by_parameter = test::make_local_cpu_run(root.path);
  by_parameter.grid = test::scaling_run(root.path, {{"trainer.lr", "lr"}}, {{"0.1"}, {"0.2"}}, {test::kShapes[0]}, 90).grid;
  save_grid(by_parameter);
  std::string e = test::user_error_of([&] { grid_run_of({plain.id, by_parameter.id}, root.path); });
  CHECK(e.find("is a grid's sweep: report it on its own") != std::string::npos);
}
