// logs -f of a race (logs.cpp): it follows the newest generation's winner,
// and only reads: a requeued winner nobody re-raced is noted with the
// command that re-races it.
#include "catch.hpp"

#include <algorithm>
#include <filesystem>

#include "base/files.hpp"
#include "fake_runner.hpp"
#include "fixtures.hpp"
#include "helpers.hpp"
#include "logs/logs.hpp"
#include "race/race_again.hpp"

using namespace ddpctl;
using test::RequeueFixture;
namespace fs = std::filesystem;

TEST_CASE("logs -f of a race already re-raced says once which generation's winner it follows") {
  RequeueFixture f;
  RaceSubmission r = f.submit();
  Run run = r.run;
  test::claim_race(run, "100", "1x1");
  f.slurm.job("100")->state = "PENDING";  // requeued: generation 2 races job 100 and 2x1 again
  REQUIRE(race_again(run, "", f.slurm.ctx, f.out).opened);
  fs::create_directory(claim_dir(run, 2));
  write_file_atomic(claim_dir(run, 2) + "/winner", "102 2x1 1795300020 0\n");
  f.slurm.job("102")->state = "COMPLETED";
  LogsRequest req;
  req.run = run.id;
  req.runs_root = f.req.runs_root;
  req.follow = true;
  f.out = {};
  show_logs(req, f.slurm.ctx, f.out);
  std::string line = "==> race " + run.id + ": generation 2 won by shape 2x1 (job 102); following it <==";
  CHECK(std::count(f.out.lines.begin(), f.out.lines.end(), line) == 1);
}

TEST_CASE("logs -f only reads: a requeued winner nobody re-raced is noted once, and nothing is submitted") {
  RequeueFixture f;
  Run run = f.submit().run;
  test::claim_race(run, "100", "1x1");
  f.slurm.job("101")->state = "CANCELLED";
  f.slurm.job("100")->state = "PENDING";  // requeued, waiting
  int polls = 0;
  f.slurm.clock.on_sleep = [&] {
    if (++polls == 5) f.slurm.job("100")->state = "COMPLETED";  // it started again by itself and ended
  };
  LogsRequest req;
  req.run = run.id;
  req.runs_root = f.req.runs_root;
  req.follow = true;
  show_logs(req, f.slurm.ctx, f.out);
  std::string note = "==> job 100 was requeued and waits; `ddpctl race-again " + run.id +
                     "` races the other shapes again (logs only reads) <==";
  CHECK(polls >= 5);
  CHECK(std::count(f.out.lines.begin(), f.out.lines.end(), note) == 1);
  CHECK(f.slurm.runner.count("sbatch") == 2);
  CHECK(read_race(load_run(run.dir)).generations.size() == 1);
}
