// Scaling reports: metrics files read back (requeues, bad lines), rows from
// runs and Slurm's times, scaling against the fewest ranks, the formats, and
// the plan's predictions.
#include "catch.hpp"
#include <cmath>
#include <filesystem>
#include <unistd.h>

#include "base/diagnostics.hpp"
#include "base/files.hpp"
#include "explain/report.hpp"
#include "explain/report_table.hpp"
#include "explain/report_plot.hpp"
#include "runs/provenance_record.hpp"
#include "helpers.hpp"
#include "runs/usage.hpp"

using namespace ddpctl;
namespace fs = std::filesystem;

namespace {
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& text) {
    std::string t = (fs::temp_directory_path() / "ddpctl-metrics.XXXXXX").string();
    int fd = mkstemp(t.data());
    close(fd);
    path = t;
    write_file_atomic(path, text);
  }
  ~TempFile() { fs::remove(path); }
};

std::string line(int epoch, double img_per_s, double epoch_s, long long time, double loss = 5.0) {
  return "{\"epoch\": " + std::to_string(epoch) + ", \"epochs\": 3, \"train_loss\": " + std::to_string(loss) +
         ", \"train_acc\": 1.5, \"val_loss\": null, \"val_acc\": null, \"val_scope\": \"none\", \"img_per_s\": " +
         std::to_string(img_per_s) + ", \"epoch_s\": " + std::to_string(epoch_s) +
         ", \"world_size\": 2, \"peak_mem_mib\": [200, 260], \"mem_kind\": \"rss\", "
         "\"rank0_mem_mib\": {\"peak\": 200, \"avg\": 150, \"mode\": 190}, \"rendezvous_s\": 0.3, "
         "\"first_step_s\": 0.5, \"time\": " +
         std::to_string(time) + "}\n";
}

Run run_of(int nodes, int ranks_per_node, int gpus_per_node, const std::string& label) {
  Run run;
  run.id = "r-" + label;
  RunShape s;
  s.label = label;
  s.job_name = "job-" + label;
  s.output_dir = "/out";
  s.nodes = nodes;
  s.ranks_per_node = ranks_per_node;
  s.gpus_per_node = gpus_per_node;
  run.shapes.push_back(s);
  Attempt a;
  a.shape = label;
  a.job_id = "7";
  a.outcome = Outcome::Submitted;
  run.attempts.push_back(a);
  return run;
}

ReportRow measured(int nodes, int rpn, double img_per_s, const std::string& label) {
  ReportRow r;
  r.label = label;
  r.nodes = nodes;
  r.ranks_per_node = rpn;
  r.img_per_s = img_per_s;
  r.images_per_epoch = 1000;
  r.first_step_s = 2;
  return r;
}
}  // namespace

TEST_CASE("metrics: a requeued epoch's later line wins, bad lines are named and skipped") {
  TempFile f(line(1, 100, 10, 1000) + line(2, 110, 9, 1009) + "{\"epoch\": 2, \"epochs\": 3, \"img_per_s\": 120, \"time\": 2000}\n" +
             "not json\n" + "{\"epochs\": 3}\n" + line(3, 130, 8, 2010) + "{\"epoch\": 4, \"img_");
  MetricsFile m = read_metrics(f.path);
  REQUIRE(m.epochs.size() == 3);
  CHECK(*m.epochs[1].img_per_s == 120);
  CHECK_FALSE(m.epochs[0].val_loss.has_value());  // null: no validation
  REQUIRE(m.warnings.size() == 3);
  CHECK(m.warnings[0] == f.path + ":4: not a JSON line, skipped (a line still being written?)");
  CHECK(m.warnings[1] == f.path + ":5: epoch: missing or not an integer, line skipped");
  CHECK(m.warnings[2].rfind(f.path + ":7:", 0) == 0);
}

TEST_CASE("report row: numbers from the metrics, wall time and hours from Slurm") {
  TempFile f(line(1, 100, 10, 1000) + line(2, 200, 5, 1005, 4.0) + line(3, 300, 4, 1009, 3.0));
  MetricsFile m = read_metrics(f.path);
  Run run = run_of(2, 4, 4, "2x4");
  Job job;
  job.state = JobState::Completed;
  job.start_time = 500;
  job.end_time = 500 + 1800;
  job.gpus = 8;
  ReportRow r = make_report_row(run, &run.attempts[0], &job, &m, 10000);
  CHECK(r.metrics_path == "/out/job-2x4_7.metrics.jsonl");
  CHECK(r.world() == 8);
  CHECK(r.epochs_done == 3);
  CHECK(*r.train_loss == 3.0);
  CHECK(*r.img_per_s == Approx(250));  // epochs 2 and 3: the first is warm-up
  CHECK(*r.images_per_epoch == Approx(1200));
  CHECK(*r.wall_s == 1800);
  CHECK(r.wall_source == "slurm");
  CHECK(*r.gpu_hours == Approx(4.0));  // 0.5 h x 8 GPUs
  CHECK(*r.node_hours == Approx(1.0));
  CHECK(*r.mem0_peak == 200);
  CHECK(*r.mem0_mode == 190);
  CHECK(*r.mem_max == 260);
  CHECK(*r.rendezvous_s == 0.3);

  // Without Slurm's times: from the metrics (process start to the last epoch).
  ReportRow no_slurm = make_report_row(run, &run.attempts[0], nullptr, &m, 10000);
  CHECK(*no_slurm.wall_s == Approx(1009 - (1000 - 10 - 0.5)));
  CHECK(no_slurm.wall_source == "metrics");
  CHECK(no_slurm.gpus == 8);  // nodes x GPUs per node

  // A job still running counts up to now.
  job.state = JobState::Running;
  ReportRow running = make_report_row(run, &run.attempts[0], &job, &m, 1000);
  CHECK(*running.wall_s == 500);
  CHECK(running.wall_source == "slurm, still running");

  ReportRow none = make_report_row(run, &run.attempts[0], &job, nullptr, 1000);
  CHECK(none.problem == "no metrics yet at /out/job-2x4_7.metrics.jsonl");
  CHECK_FALSE(none.img_per_s.has_value());
}

TEST_CASE("scaling: speedup and efficiency against the fewest ranks") {
  std::vector<ReportRow> rows = {measured(1, 2, 180, "1x2"), measured(1, 1, 100, "1x1"), measured(2, 2, 300, "2x2")};
  rows.push_back(ReportRow{});  // a run without numbers is left alone
  compute_scaling(rows);
  CHECK(*rows[1].speedup == 1.0);
  CHECK(*rows[0].speedup == Approx(1.8));
  CHECK(*rows[0].efficiency == Approx(0.9));
  CHECK(*rows[2].efficiency == Approx(0.75));
  CHECK_FALSE(rows[3].speedup.has_value());
}

TEST_CASE("formats: markdown in the seeds' layout, CSV quoted, JSON with nulls") {
  std::vector<ReportRow> rows = {measured(1, 1, 100, "1x1"), measured(2, 1, 190, "2x1")};
  rows[1].gpus_per_node = 1;
  rows[1].gpus = 2;
  rows[1].problem = "a, \"quoted\" note";
  compute_scaling(rows);
  std::string md = report_markdown(rows);
  CHECK_THAT(md, Catch::StartsWith("| Setup | Ranks | GPUs | Throughput (img/s) | Speedup | Efficiency |"));
  CHECK_THAT(md, Catch::Contains("| 1 node × 1 rank | 1 | 0 | 100.0 | 1.00× | 100% |"));
  CHECK_THAT(md, Catch::Contains("| 2 nodes × 1 GPU | 2 | 2 | 190.0 | 1.90× | 95% |"));
  std::string csv = report_csv(rows);
  CHECK_THAT(csv, Catch::EndsWith(",\"a, \"\"quoted\"\" note\",,,\n"));  // then failure, flops_per_sample, mfu
  std::string json = report_json(rows);
  CHECK_THAT(json, Catch::Contains("\"efficiency\": 0.95"));
  CHECK_THAT(json, Catch::Contains("\"wall_s\": null"));
  std::string table = report_table(rows);
  CHECK_THAT(table, Catch::Contains("2x1 (): a, \"quoted\" note"));
  std::string data = report_plot_data(rows);
  CHECK(data == "# label ranks speedup efficiency ideal label_y\n\"1x1\" 1 1.000000 1.000000 1.000000 1.140000\n"
                "\"2x1\" 2 1.900000 0.950000 2.000000 2.040000\n");
  std::string gp = report_gnuplot(rows, "/d/data.txt", "/o/it's.svg", "svg");
  CHECK_THAT(gp, Catch::Contains("set output '/o/it''s.svg'") && Catch::Contains("xlabel \"GPUs\""));
  // Ranks on a log2 axis with whole-number ticks at the powers of two.
  CHECK_THAT(gp, Catch::Contains("set logscale x 2") && Catch::Contains("set xtics (1, 2, 4)"));
}

TEST_CASE("report plot: shapes of equal ranks get labels a line apart, never on each other") {
  std::vector<ReportRow> rows(3);
  rows[0].label = "1x1", rows[0].img_per_s = 100;
  rows[1].label = "1x2", rows[1].ranks_per_node = 2, rows[1].img_per_s = 190;
  rows[2].label = "2x1", rows[2].nodes = 2, rows[2].img_per_s = 188;
  compute_scaling(rows);
  std::string data = report_plot_data(rows);
  // 1x2 (1.90) and 2x1 (1.88) share x = 2: labels at 1.90 + 0.14 and one step (0.14) higher.
  CHECK_THAT(data, Catch::Contains("\"1x2\" 2 1.900000 0.950000 2.000000 2.040000\n\"2x1\" 2 1.880000 0.940000 2.000000 2.180000\n"));
}

TEST_CASE("report: usage columns from the job agent's samples, for any program") {
  test::TempDir dir;
  std::string base = dir.path + "/job_7";
  auto sample = [](double t, const std::string& node, double cpu, long long rss, double util, double mem) {
    UsageSample s;
    s.t = t, s.node = node, s.job_id = "7", s.cpu_pct = cpu, s.rss_bytes = rss, s.cpus = 4;
    s.gpus.push_back({0, util, mem, 81920});
    return usage_sample_json(s).dump() + "\n";
  };
  write_file_atomic(usage_path(base, "g1"), sample(100, "g1", 300, 2LL << 30, 90, 40960) + sample(105, "g1", 390, 3LL << 30, 100, 61440));
  write_file_atomic(usage_path(base, "g2"), sample(101, "g2", 200, 1LL << 30, 80, 61440));
  ReportRow row;
  row.label = "2x1", row.run_id = "r", row.job_id = "7";
  add_usage(row, base, read_usage(base));
  REQUIRE(row.rss_peak_bytes);
  CHECK(*row.rss_peak_bytes == (3LL << 30));
  CHECK(*row.gpu_util_mean == Approx(90));
  CHECK(*row.gpu_mem_peak_mib == Approx(61440));
  CHECK(*row.gpu_mem_mode_mib == Approx(61440));
  CHECK(*row.cpu_pct_mean == Approx(345 + 200));
  std::string table = report_table({row});
  CHECK_THAT(table, Catch::Contains("90%") && Catch::Contains("60.0/53.3/60.0") && Catch::Contains("545%") &&
                        Catch::Contains("3.0 GiB"));
  CHECK_THAT(report_json({row}), Catch::Contains("\"rss_peak_bytes\": 3221225472"));
  CHECK_THAT(report_markdown({row}), Catch::Contains("| 90% | 60.0/53.3/60.0 | 545% | 3.0 GiB |"));
  // The time series: one data file per node, minutes from the job's first sample.
  auto data = usage_plot_data(read_usage(base));
  REQUIRE(data.size() == 2);
  CHECK_THAT(data["g1"], Catch::Contains("0.000 3.00 2.000 90.0 40.000\n0.083 3.90 3.000 100.0 60.000\n"));
  CHECK_THAT(data["g2"], Catch::Contains("0.017 2.00 1.000 80.0 60.000\n"));
  std::string gp = usage_gnuplot("2x1 (job 7)", {{"g1", "/d/g1.txt"}, {"g2", "/d/g2.txt"}}, true, "/o/u.png", "png");
  CHECK_THAT(gp, Catch::Contains("set multiplot layout 3,1") && Catch::Contains("'/d/g2.txt' using 1:5") &&
                     Catch::Contains("title 'g1 RSS'"));
  CHECK(usage_plot_path("out/scaling.png", row) == "out/scaling.2x1-7.usage.png");
}

TEST_CASE("plan: measured efficiency, else the nearest shape's on the same side of the node boundary") {
  std::vector<ReportRow> rows = {measured(1, 1, 100, "1x1"), measured(1, 2, 190, "1x2"), measured(2, 1, 160, "2x1")};
  compute_scaling(rows);
  std::vector<PlanShape> shapes = {{"1x2", 1, 2, 2}, {"1x4", 1, 4, 4}, {"4x1", 4, 1, 1}, {"1x1", 1, 1, 1}};
  auto p = predict(rows, shapes, 3);
  REQUIRE(p.size() == 4);
  CHECK(p[0].efficiency_from == "measured");
  CHECK(p[0].img_per_s == Approx(190));
  CHECK(p[0].time_s == Approx(3 * 1000 / 190.0 + 2));
  CHECK(*p[0].gpu_hours == Approx(p[0].time_s / 3600 * 2));
  CHECK(p[1].efficiency_from == "from shape 1x2");
  CHECK(p[1].img_per_s == Approx(100 * 4 * 0.95));
  CHECK(p[2].efficiency_from == "from shape 2x1");
  CHECK(p[2].efficiency == Approx(0.8));
  CHECK(p[3].efficiency_from == "measured");

  std::vector<ReportRow> only_base = {measured(1, 1, 100, "1x1")};
  compute_scaling(only_base);
  CHECK(predict(only_base, {{"2x1", 2, 1, 1}}, 1)[0].efficiency_from == "assumed ideal");
  CHECK_THROWS_AS(predict({ReportRow{}}, shapes, 1), UserError);
}

// Once a SECTION of agent/test_provenance.cpp's round trip (agent/ cannot
// include report.hpp), with its two records built again here.
TEST_CASE("report warns about rows whose environments differ") {
  Provenance a;
  a.job_id = "7";
  a.nodes = {"g1"};
  a.python = "3.11.2";
  a.torch = "1.13.1";
  a.modules = {"cuda/12.1"};
  a.env = {{"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "20001"}, {"NCCL_DEBUG", "WARN"}, {"DDPCTL_SNAPSHOT", "/r/.snapshots/aa"}};
  Provenance b = a;
  b.job_id = "8";
  b.nodes = {"g7", "g8"};
  b.env = {{"MASTER_ADDR", "10.0.0.9"}, {"MASTER_PORT", "20002"}, {"NCCL_DEBUG", "INFO"}, {"DDPCTL_SNAPSHOT", "/r/.snapshots/bb"}};
  b.torch = "2.14.1";
  b.modules.clear();
  ReportRow r1, r2, r3;
  r1.label = "1x1";
  r1.provenance = a;
  r2.label = "2x1";
  r2.provenance = a;
  r3.label = "4x1";
  CHECK(mixed_provenance_note({r1, r2, r3}).empty());  // a row without a record is not a difference
  r3.provenance = b;
  CHECK(mixed_provenance_note({r1, r2, r3}) ==
        "these rows ran in different environments: torch 1.13.1 (1x1, 2x1) vs 2.14.1 (4x1); "
        "modules cuda/12.1 (1x1, 2x1) vs none (4x1); NCCL_DEBUG WARN (1x1, 2x1) vs INFO (4x1)");
}
