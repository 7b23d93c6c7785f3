// Results by parameter: `report SWEEP` of a grid's sweep. The spec's metric:
// patterns, each cell's final metrics (the trainer's metrics file, or the
// patterns over its rank-0 log) joined with Slurm's records of the arrays
// (real 24.11 answers, tests/unit/data), mean ± std over the seed axis, the
// best cell, the formats and the plot's data.
#include "catch.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fake_runner.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "runs/job_files.hpp"
#include "spec/metric_pattern.hpp"
#include "explain/parameter_report.hpp"
#include "explain/parameter_plot.hpp"
#include "explain/parameter_table.hpp"
#include "report/report_grid_collect.hpp"
#include "runs/run_store.hpp"
#include "spec/spec.hpp"

using namespace ddpctl;
namespace fs = std::filesystem;

namespace {

std::string error_for(const std::string& yaml) {
  return test::user_error_of([&] {
    parse_run_spec("p.yaml", "name: d\ncluster: local\ngpus_per_node: 0\nprocs_per_node: 1\ncommand: [prog]\n" + yaml);
  });
}

RunSpec spec_with(const std::string& yaml) {
  return parse_run_spec("p.yaml", "name: d\ncluster: local\ngpus_per_node: 0\nprocs_per_node: 1\ncommand: [prog]\n" + yaml);
}

std::string grid_fixture(const std::string& name) {
  return read_file(test::source_dir() + "/tests/unit/data/24.11/" + name);
}

// The bundled trainer's line of its last epoch.
std::string trainer_line(int epoch, double val_loss, double val_acc) {
  return fmt::format("{{\"epoch\": {}, \"epochs\": {}, \"train_loss\": 1.0, \"train_acc\": 0.5, \"val_loss\": {}, "
                     "\"val_acc\": {}, \"val_scope\": \"full\", \"img_per_s\": 100.0, \"epoch_s\": 2.0, "
                     "\"world_size\": 2, \"time\": 1795300000}}\n",
                     epoch, epoch, val_loss, val_acc);
}

// A sweep of lr x seed (2 x 3 cells, the first key slowest) whose array
// `array_id` ran cells `array` ("0-3": cells 4 and 5 were never submitted).
Run grid_run(const std::string& out_dir, const std::string& array_id, const std::string& array) {
  Run run;
  run.id = "grid-20261126";
  run.dir = out_dir;
  RunShape s;
  s.label = "1x1";
  s.job_name = "cap-array-end";
  s.output_dir = out_dir;
  run.shapes.push_back(s);
  RunGrid g;
  g.keys = {{"trainer.lr", "lr"}, {"trainer.seed", "seed"}};
  int i = 0;
  for (const char* lr : {"0.1", "0.01"})
    for (const char* seed : {"1", "2", "3"}) {
      RunCell c;
      c.index = i++;
      c.name = fmt::format("lr={},seed={}", lr, seed);
      c.shape = "1x1";
      c.values = {{"trainer.lr", lr}, {"trainer.seed", seed}};
      g.cells.push_back(c);
    }
  run.grid = g;
  Attempt a;
  a.shape = "1x1";
  a.job_id = array_id;
  a.array = array;
  a.outcome = Outcome::Submitted;
  run.attempts.push_back(a);
  return run;
}

// Slurm's answers for the finished array 16 of the capture (task 0 is job
// 17, 1 is 18 and FAILED, 2 is 19, 3 is 16): squeue no longer knows it,
// sacct does.
void finished_array(test::FakeRunner& runner) {
  runner.on("squeue", {"--json"}, test::exits(1, "", "slurm_load_jobs error: Invalid job id specified\n"));
  runner.on("sacct", {}, test::exits(0, grid_fixture("array-finished-sacct.txt")));
}

void write_metrics(const std::string& dir, const std::string& task_job_id, double val_loss, double val_acc) {
  std::string base = job_files::log_base(dir, "cap-array-end", task_job_id);
  write_file_atomic(job_files::metrics(base), trainer_line(1, 9.0, 0.0) + trainer_line(2, val_loss, val_acc));
}

GridReport finished_report(const std::string& dir, test::FakeRunner& runner, GridReportOptions o) {
  finished_array(runner);
  write_metrics(dir, "17", 0.5, 0.70);  // lr=0.1,seed=1
  write_metrics(dir, "18", 0.1, 0.95);  // lr=0.1,seed=2: FAILED, never the best, not in the mean
  write_metrics(dir, "19", 0.3, 0.80);  // lr=0.1,seed=3
  write_metrics(dir, "16", 0.2, 0.85);  // lr=0.01,seed=1 (the last task carries the array's id)
  SlurmClient slurm(runner);
  test::RecordingOutput out;
  return collect_grid_report(grid_run(dir, "16", "0-3"), slurm, o, out);
}

}  // namespace

TEST_CASE("metric: a pattern, a list of them, or a map with the log to read", "[report_grid]") {
  CHECK(spec_with("metric: 'val_loss=(?P<val_loss>[0-9.eE+-]+)'\n").metric->patterns ==
        std::vector<std::string>{"val_loss=(?P<val_loss>[0-9.eE+-]+)"});
  RunSpec two = spec_with("metric: ['loss=(?P<val_loss>\\S+)', 'acc (?<acc>\\S+)']\n");
  CHECK(two.metric->patterns.size() == 2);
  CHECK(metric_names(*two.metric) == std::vector<std::string>{"val_loss", "acc"});
  RunSpec map = spec_with("metric: {pattern: 'acc (?<acc>\\S+)', file: batch}\n");
  CHECK(map.metric->file == "batch");
  CHECK_FALSE(spec_with("").metric);
}

TEST_CASE("metric: a pattern that does not compile or names no metric is refused at its line", "[report_grid]") {
  std::string bad = error_for("metric: 'val_loss=(?P<val_loss>[0-9.'\n");
  CHECK(bad.find("p.yaml:6") != std::string::npos);
  CHECK(bad.find("metric") != std::string::npos);
  CHECK(bad.find("does not compile") != std::string::npos);
  std::string unnamed = error_for("metric:\n  pattern:\n    - 'a=(?P<a>\\d+)'\n    - 'val_loss=([0-9.]+)'\n");
  CHECK(unnamed.find("p.yaml:9") != std::string::npos);
  CHECK(unnamed.find("names no metric") != std::string::npos);
  CHECK(error_for("metric: {pattern: '(?P<a>\\d)', file: rank1}\n").find("metric.file: 'rank1' must be 'rank0'") !=
        std::string::npos);
  CHECK(error_for("metric: {file: batch}\n").find("metric.pattern: required") != std::string::npos);
  CHECK(error_for("metrik: '(?P<a>\\d)'\n").find("metrik") != std::string::npos);
}

TEST_CASE("metric values: the last match of each group wins, text that is no number is passed over",
          "[report_grid]") {
  MetricSpec m;
  m.patterns = {"val_loss=(?P<val_loss>[0-9.eE+-]+)", "acc=(?P<acc>\\S+)"};
  auto v = read_metric_values(m, {"epoch 1 val_loss=2.5 acc=0.1", "val_loss=1.25 val_loss=1e-1", "acc=n/a",
                                  "no numbers here"});
  CHECK(v.at("val_loss") == Approx(0.1));
  CHECK(v.at("acc") == Approx(0.1));
  CHECK(read_metric_values(m, {"nothing"}).empty());
}

TEST_CASE("the seed axis: the key named seed or ending in it, or the one --seed-key names", "[report_grid]") {
  RunGrid g;
  g.keys = {{"trainer.lr", "lr"}, {"env.DATA_SEED", "DATA_SEED"}};
  CHECK(seed_key_of(g, std::nullopt) == 1u);
  CHECK(seed_key_of(g, "lr") == 0u);
  CHECK(seed_key_of(g, "trainer.lr") == 0u);
  CHECK_FALSE(seed_key_of(g, "none"));
  g.keys = {{"trainer.lr", "lr"}, {"nodes", "nodes"}};
  CHECK_FALSE(seed_key_of(g, std::nullopt));
  std::string e = test::user_error_of([&] { seed_key_of(g, "sed"); });
  CHECK(e.find("--seed-key") != std::string::npos);
  CHECK(e.find("'lr', 'nodes'") != std::string::npos);
}

TEST_CASE("a finished sweep: one squeue and one sacct, each cell's last epoch, mean ± std over seeds, the best",
          "[report_grid]") {
  test::TempDir dir;
  test::FakeRunner runner;
  GridReport r = finished_report(dir.path, runner, {std::nullopt, parse_best("val_loss:min")});
  CHECK(runner.count("squeue") == 1);
  CHECK(runner.count("sacct") == 1);
  REQUIRE(r.cells.size() == 6);
  CHECK(r.cells[0].task == "16_0");
  CHECK(r.cells[0].task_job_id == "17");
  CHECK(r.cells[0].state == "COMPLETED");
  CHECK(r.cells[0].metrics.at("val_loss") == Approx(0.5));  // the last epoch's, not the first's
  CHECK(r.cells[1].state == "FAILED");
  CHECK(r.cells[3].task_job_id == "16");
  CHECK(r.cells[3].metrics.at("val_loss") == Approx(0.2));
  CHECK(r.cells[4].state == "NOT SUBMITTED");
  CHECK(r.cells[4].metrics.empty());
  CHECK(r.metrics == std::vector<std::string>{"val_loss", "val_acc", "train_loss", "train_acc", "img_per_s"});
  // Grouped by lr: the COMPLETED cells' mean and sample std.
  REQUIRE(r.seed_key == 1u);
  REQUIRE(r.groups.size() == 2);
  CHECK(r.groups[0].completed == 2);
  CHECK(r.groups[0].metrics.at("val_loss").mean == Approx(0.4));
  CHECK(*r.groups[0].metrics.at("val_loss").std == Approx(0.141421).epsilon(1e-4));
  CHECK(r.groups[1].completed == 1);
  CHECK_FALSE(r.groups[1].metrics.at("val_loss").std);
  // The failed cell's 0.1 is lowest but not final: lr=0.01 (0.2) is the best.
  CHECK(r.groups[1].best);
  CHECK_FALSE(r.groups[0].best);
  CHECK(r.cells[3].best);
  CHECK_FALSE(r.cells[1].best);
  CHECK(r.best_line == "best by val_loss (min): lr=0.01: val_loss 0.2 over 1 seed (mean ± std)");

  std::string table = grid_report_table(r);
  CHECK(table.find("sweep grid-20261126: 6 cells: 3 done, 1 failed, 2 not submitted") != std::string::npos);
  CHECK(table.find("LR    N    VAL_LOSS") != std::string::npos);
  CHECK(table.find("0.1   2/3  0.4 ± 0.1414") != std::string::npos);
  CHECK(table.find("1 completed, 2 not submitted  <- best") != std::string::npos);
  std::string csv = grid_report_csv(r);
  CHECK(csv.rfind("lr,n,cells,val_loss_mean,val_loss_std,val_acc_mean,", 0) == 0);
  CHECK(csv.find("\n0.01,1,3,0.2,,0.85,,") != std::string::npos);
  std::string md = grid_report_markdown(r);
  CHECK(md.find("| lr | n | val_loss (mean ± std) |") != std::string::npos);
  CHECK(md.find("| **0.01** | 1/3 | **0.2** (best) |") != std::string::npos);
  nlohmann::json j = nlohmann::json::parse(grid_report_json(r));
  CHECK(j["seed_key"] == "seed");
  CHECK(j["groups"][0]["metrics"]["val_loss"]["n"] == 2);
  CHECK(j["cells"][1]["state"] == "FAILED");
  CHECK(j["cells"][3]["best"] == true);
  CHECK(j["best"]["direction"] == "min");
}

TEST_CASE("each cell on its own with --seed-key none, the best by a maximum", "[report_grid]") {
  test::TempDir dir;
  test::FakeRunner runner;
  GridReport r = finished_report(dir.path, runner, {std::string("none"), parse_best("val_acc:max")});
  CHECK_FALSE(r.seed_key);
  CHECK(r.groups.empty());
  CHECK(r.cells[3].best);  // 0.85: the failed cell's 0.95 does not count
  std::string table = grid_report_table(r);
  CHECK(table.find("LR    SEED  TASK  STATE          VAL_LOSS  VAL_ACC") != std::string::npos);
  CHECK(table.find("0.01  1     16_3  COMPLETED      0.2       0.85     1           0.5        100        <- best") !=
        std::string::npos);
  CHECK(table.find("0.01  3     -     NOT SUBMITTED  -") != std::string::npos);
  CHECK(r.best_line == "best by val_acc (max): cell lr=0.01,seed=1 (task 16_3): val_acc 0.85");
  std::string csv = grid_report_csv(r);
  CHECK(csv.rfind("lr,seed,cell,task,task_job_id,state,val_loss,", 0) == 0);
  CHECK(csv.find("\n0.1,2,\"lr=0.1,seed=2\",16_1,18,FAILED,0.1,0.95,") != std::string::npos);
}

TEST_CASE("best: a metric no cell has names the metrics found", "[report_grid]") {
  test::TempDir dir;
  test::FakeRunner runner;
  std::string e = test::user_error_of([&] { finished_report(dir.path, runner, {std::nullopt, parse_best("val_los:min")}); });
  CHECK(e.find("--best") != std::string::npos);
  CHECK(e.find("'val_los': no cell has this metric; the metrics found are 'val_loss', 'val_acc'") != std::string::npos);
  CHECK(e.find("did you mean 'val_loss'") != std::string::npos);
  CHECK(test::user_error_of([] { parse_best("val_loss"); }).find("METRIC:min or METRIC:max") != std::string::npos);
  CHECK(test::user_error_of([] { parse_best("val_loss:low"); }).find("METRIC:min") != std::string::npos);
}

TEST_CASE("any program: the spec's metric: patterns over each cell's rank-0 log, a later attempt's last",
          "[report_grid]") {
  test::TempDir dir;
  test::FakeRunner runner;
  finished_array(runner);
  Run run = grid_run(dir.path, "16", "0-3");
  run.shapes[0].metric = MetricSpec{{"val_loss=(?P<val_loss>[0-9.eE+-]+)"}, "rank0"};
  std::string base = job_files::log_base(dir.path, "cap-array-end", "17");
  write_file_atomic(job_files::step_log(base, 0, 0), "step 1 val_loss=3.0\nval_loss=2.0\n");
  write_file_atomic(job_files::step_log(base, 1, 0), "val_loss=1.5\nresumed\n");
  base = job_files::log_base(dir.path, "cap-array-end", "16");
  write_file_atomic(job_files::step_log(base, 0, 0), "val_loss=0.75\n");
  SlurmClient slurm(runner);
  test::RecordingOutput out;
  GridReport r = collect_grid_report(run, slurm, {std::string("none"), parse_best("val_loss:min")}, out);
  CHECK(r.metrics == std::vector<std::string>{"val_loss"});
  CHECK(r.cells[0].metrics.at("val_loss") == Approx(1.5));
  CHECK(r.cells[0].source == job_files::step_log(job_files::log_base(dir.path, "cap-array-end", "17"), 1, 0));
  CHECK(r.cells[2].metrics.empty());  // task 19 printed nothing
  CHECK(r.cells[3].best);
}

TEST_CASE("a running sweep: squeue says it all (no sacct), cells not ended show their state and no metric",
          "[report_grid]") {
  test::TempDir dir;
  test::FakeRunner runner;
  // Array 12: tasks 0 and 1 running (jobs 13, 14), 2-5 pending under %2.
  runner.on("squeue", {"--json"}, test::exits(0, grid_fixture("array-running-squeue.json")));
  Run run = grid_run(dir.path, "12", "0-5%2");
  run.shapes[0].job_name = "cap-array";
  // A running cell's metrics file is not final: not read.
  write_file_atomic(job_files::metrics(job_files::log_base(dir.path, "cap-array", "13")), trainer_line(1, 0.9, 0.1));
  SlurmClient slurm(runner);
  test::RecordingOutput out;
  GridReport r = collect_grid_report(run, slurm, {}, out);
  CHECK(runner.count("squeue") == 1);
  CHECK(runner.count("sacct") == 0);
  CHECK(r.cells[0].state == "RUNNING");
  CHECK(r.cells[0].task == "12_0");
  CHECK(r.cells[0].metrics.empty());
  CHECK(r.cells[5].state == "PENDING");
  CHECK(r.cells[5].task_job_id.empty());
  CHECK(r.metrics.empty());
  CHECK(grid_report_table(r).find("2 running, 4 pending (throttled)") != std::string::npos);
}

TEST_CASE("the plot's data: a line per other key's value, the seeds averaged with their std", "[report_grid]") {
  test::TempDir dir;
  test::FakeRunner runner;
  GridReport r = finished_report(dir.path, runner, {std::nullopt, parse_best("val_loss:min")});
  // x = lr (numeric), averaged over seed: one series.
  GridPlot p = grid_plot(r, "val_loss", 0, "/d.txt", "/o.png", "png");
  CHECK(p.data == "# val_loss\n0.1 0.4 0.1414213562 \"0.1\"\n0.01 0.2 0 \"0.01\"\n\n\n# best\n0.01 0.2 0 \"0.01\"\n");
  CHECK(p.script.find("set logscale x") != std::string::npos);  // 0.01 to 0.1: a decade
  CHECK(p.script.find("with yerrorlines") != std::string::npos);
  CHECK(p.script.find("title 'mean ± std'") != std::string::npos);
  CHECK(p.script.find("set ylabel 'val_loss, lower is better'") != std::string::npos);
  // x = seed: a line per lr, each cell its own point.
  GridPlot by_seed = grid_plot(r, "val_loss", 1, "/d.txt", "/o.png", "png");
  CHECK(by_seed.data == "# lr=0.1\n1 0.5 0 \"1\"\n3 0.3 0 \"3\"\n\n\n# lr=0.01\n1 0.2 0 \"1\"\n\n\n# best\n1 0.2 0 \"1\"\n");
  CHECK(by_seed.script.find("set logscale x") == std::string::npos);
  CHECK(by_seed.script.find("index 1 using 1:2 with linespoints") != std::string::npos);
  CHECK(by_seed.script.find("title 'lr=0.01'") != std::string::npos);
}

TEST_CASE("report of a grid's sweep: named alone it is the grid's report, with other runs an error",
          "[report_grid]") {
  test::TempDir root;
  Run plain = test::make_local_cpu_run(root.path);
  Run grid = test::make_local_cpu_run(root.path);
  grid.grid = grid_run(root.path, "16", "0-3").grid;
  save_grid(grid);
  auto found = grid_run_of({grid.id}, root.path);
  REQUIRE(found);
  CHECK(found->id == grid.id);
  CHECK(found->grid->cells.size() == 6);
  CHECK_FALSE(grid_run_of({plain.id}, root.path));
  std::string e = test::user_error_of([&] { grid_run_of({plain.id, grid.id}, root.path); });
  CHECK(e.find("is a grid's sweep: report it on its own") != std::string::npos);
}
