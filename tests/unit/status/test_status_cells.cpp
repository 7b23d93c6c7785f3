// status SWEEP over a grid's cells (status.hpp): each cell's row says its
// last metric, read from its files (cell_files.hpp) with no more Slurm calls.
#include "catch.hpp"

#include "base/files.hpp"
#include "ended_sweep.hpp"
#include "runs/job_files.hpp"
#include "status/status.hpp"

using namespace ddpctl;
using test::EndedSweep;
using test::trainer_line;

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
