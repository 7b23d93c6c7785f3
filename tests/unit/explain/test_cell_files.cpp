// A grid cell's files (cell_files.hpp): its metrics, read the same way for
// `report SWEEP` and `status SWEEP`, and the last one of them, from files
// only (the sweep: ended_sweep.hpp; status SWEEP's rows:
// tests/unit/status/test_status_cells.cpp).
#include "catch.hpp"

#include "explain/cell_files.hpp"
#include "base/files.hpp"
#include "ended_sweep.hpp"
#include "helpers.hpp"
#include "runs/job_files.hpp"

using namespace ddpctl;
using test::EndedSweep;
using test::trainer_line;

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
