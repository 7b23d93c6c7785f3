// status SWEEP for cells Slurm requeued (status.cpp, status_grid): their
// earlier attempts from sacct, kept with their ends, asked by the task's own
// id. The table's other rows: test_status.cpp.
#include "catch.hpp"
#include <algorithm>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "fake_runner.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "runs/run_store.hpp"
#include "fixtures.hpp"
#include "runs/ledger.hpp"
#include "runs/run_store.hpp"
#include "status/status.hpp"
#include "submit/submit.hpp"
#include "base/text.hpp"
#include "agent/watchdog.hpp"

using namespace ddpctl;
using test::FakeSlurm;

namespace {

// A sweep of two cells whose one array attempt made job `array` (the real
// 22.05 captures of tests/unit/data/capture-array-requeue.sh: both tasks
// requeued once; task 1 runs under the array's own id).
Run requeued_sweep(const std::string& root, const std::string& array) {
  Run run = test::make_local_cpu_run(root);
  RunGrid grid;
  grid.keys = {{"env.LR", "LR"}};
  for (int i = 0; i < 2; ++i)
    grid.cells.push_back({i, "LR=" + std::to_string(i), run.shapes.at(0).label, root + "/cell" + std::to_string(i),
                          {{"env.LR", std::to_string(i)}}});
  run.grid = grid;
  save_grid(run);
  update_ledger(run, [&](std::vector<Attempt>& all) {
    Attempt a;
    a.token = "tokrequeue";
    a.shape = run.shapes.at(0).label;
    a.outcome = Outcome::Submitted;
    a.job_id = array;
    a.array = "0-1";
    all.push_back(a);
  });
  return load_run(run.dir);
}

std::string requeue_fixture(const std::string& name) {
  return read_file(test::source_dir() + "/tests/unit/data/22.05/array-requeued-" + name);
}

// The row of status SWEEP for task `id`.
const StatusRow& row_of(const StatusReport& s, const std::string& id) {
  for (const auto& r : s.rows)
    if (r.job == id) return r;
  FAIL("no row for " << id);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("a sweep's requeued cells: their earlier attempts from sacct, kept with their ends, then no Slurm call") {
  test::TempDir dir;
  Run run = requeued_sweep(dir.path + "/runs", "17");
  test::FakeRunner runner;
  // Both tasks ended MinJobAge ago: squeue knows neither.
  runner.on("squeue", {}, test::exits(1, "", "slurm_load_jobs error: Invalid job id specified\n"));
  runner.on("sacct", {"--jobs=17"}, test::exits(0, requeue_fixture("ended-sacct.txt")));
  runner.on("sacct", {"--jobs=17", "--duplicates"}, test::exits(0, requeue_fixture("ended-sacct-duplicates.txt")));
  SlurmClient slurm(runner);
  StatusRequest req;
  req.targets = {run.id};
  req.runs_root = dir.path + "/runs";
  req.json = true;
  StatusReport first = collect_status(req, slurm, 1795300000);
  for (const char* id : {"17_0", "17_1"}) {
    INFO(id);
    const StatusRow& row = row_of(first, id);
    CHECK(row.state == "COMPLETED");
    // No log of theirs is here: sacct's records alone say it.
    CHECK_THAT(row.info, Catch::StartsWith("attempt 2 (requeued by scontrol requeue)"));
    CHECK(row.json["attempt"]["number"] == 2);
  }
  Run recorded = load_run(run.dir);
  const Attempt& a = recorded.attempts.back();
  REQUIRE(a.task_ends.size() == 2);
  for (int cell : {0, 1}) {
    const JobEnd* end = a.task_end(cell);
    REQUIRE(end);
    CHECK(end->job.requeues == 1);
    // Its own earlier attempt, not the other task's.
    REQUIRE(end->earlier.size() == 1);
    CHECK(end->earlier[0].state == JobState::Requeued);
    CHECK(end->earlier[0].array_task_id == cell);
  }
  // Ended: the requeues are explained from the ledger, asking Slurm nothing.
  runner.calls.clear();
  StatusReport second = collect_status(req, slurm, 1795300100);
  CHECK(runner.calls.empty());
  CHECK(row_of(second, "17_1").info == row_of(first, "17_1").info);
  CHECK(row_of(second, "17_0").info == row_of(first, "17_0").info);
}

TEST_CASE("a running requeued cell's earlier attempts are asked as <array>_<task>, not by the array's own id") {
  test::TempDir dir;
  Run run = requeued_sweep(dir.path + "/runs", "17");
  test::FakeRunner runner;
  runner.on("squeue", {}, test::exits(0, requeue_fixture("squeue.json")));
  // Asked by its own id, sacct answers for the array: every task's records,
  // task 0's second attempt last.
  runner.on("sacct", {"--jobs=17"}, test::exits(0, requeue_fixture("sacct-duplicates.txt")));
  // (The fake matches a word by its prefix: the later rules win for these.)
  runner.on("sacct", {"--jobs=17_1"}, test::exits(0, requeue_fixture("sacct-task1.txt")));
  runner.on("sacct", {"--jobs=17_0"}, [](const std::vector<std::string>&) {
    std::string out;
    for (const auto& line : split(requeue_fixture("sacct-duplicates.txt"), '\n'))
      if (line.rfind("17_0|", 0) == 0) out += line + "\n";
    return test::exits(0, out);
  });
  SlurmClient slurm(runner);
  StatusRequest req;
  req.targets = {run.id};
  req.runs_root = dir.path + "/runs";
  req.json = true;
  StatusReport s = collect_status(req, slurm, 1795300000);
  const StatusRow& task1 = row_of(s, "17_1");
  CHECK(task1.state == "RUNNING");
  CHECK(task1.json["task_job_id"] == "17");
  CHECK_THAT(task1.info, Catch::StartsWith("attempt 2 (requeued by scontrol requeue)"));
  // The fake matches words by prefix: the exact ones asked, in order.
  std::vector<std::string> asked;
  for (const auto& argv : runner.calls)
    if (std::find(argv.begin(), argv.end(), "sacct") != argv.end())  // run as `env SLURM_BITSTR_LEN=0 sacct ...`
      for (const auto& w : argv)
        if (w.rfind("--jobs=", 0) == 0) asked.push_back(w);
  std::sort(asked.begin(), asked.end());
  CHECK(asked == std::vector<std::string>{"--jobs=17_0", "--jobs=17_1"});
  CHECK(runner.count("sacct", {"--duplicates"}) == 2);
}
