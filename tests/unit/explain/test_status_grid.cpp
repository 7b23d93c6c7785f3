// A grid's cells as Slurm's real records of its arrays say (the captures of
// tests/unit/data/<version>/array-*, capture-array.sh), the sweep in one line,
// and the cells' ends kept in the ledger once final.
#include <filesystem>
#include <fmt/format.h>

#include "catch.hpp"

#include "base/files.hpp"
#include "grid_run.hpp"
#include "helpers.hpp"
#include "runs/run_store.hpp"
#include "slurm/slurm_parse_jobs.hpp"
#include "explain/status_grid.hpp"

using namespace ddpctl;

using test::fixture;
using test::grid_run;

TEST_CASE("status_grid: a running array's cells: two tasks running, the collapsed record's four pending on the limit") {
  for (const char* version : {"22.05", "24.11", "26.05"}) {
    INFO(version);
    std::vector<Job> records = parse_squeue_json(fixture(version, "array-running-squeue.json"));
    REQUIRE_FALSE(records.empty());
    std::string array = submission_id(records.front());
    Run run = grid_run(6, array);
    std::vector<CellState> cells = cell_states(run, records);
    REQUIRE(cells.size() == 6);
    int running = 0, throttled = 0;
    for (const auto& c : cells) {
      CHECK(c.shown_id == array + "_" + std::to_string(c.cell->index));
      if (c.job.state == JobState::Running) ++running;
      if (c.throttled) ++throttled;
    }
    CHECK(running == 2);
    CHECK(throttled == 4);
    CHECK(grid_state(cells) == JobState::Running);
    CHECK(grid_summary(cells, 2) == "6 cells: 2 running, 4 pending (throttled %2)");
    // A running task is its own job: its id names its logs.
    CHECK(cells[0].job.id != array);
  }
}

TEST_CASE("status_grid: a finished array from sacct: each cell's end, the sweep's state and summary") {
  std::vector<Job> records = parse_sacct(fixture("24.11", "array-finished-sacct.txt"));
  std::string array = submission_id(records.front());
  Run run = grid_run(4, array);
  std::vector<CellState> cells = cell_states(run, records);
  REQUIRE(cells.size() == 4);
  CHECK(cells[1].job.state == JobState::Failed);
  CHECK(cells[1].job.exit.code == 3);
  CHECK(grid_state(cells) == JobState::Failed);
  CHECK(grid_summary(cells, 2) == "4 cells: 3 done, 1 failed");
}

TEST_CASE("status_grid: cells Slurm does not show are unknown, cells never submitted say so, a retry's array wins") {
  Run run = grid_run(3, "50");
  CHECK(grid_summary(cell_states(run, {}), 2) == "3 cells: 3 unknown");
  run.attempts.front().array = "0-1%2";  // cell 2 was never in an array
  CHECK(grid_summary(cell_states(run, {}), 2) == "3 cells: 2 unknown, 1 not submitted");
  Attempt retry = run.attempts.front();
  retry.token = "tok2";
  retry.job_id = "60";
  retry.array = "1";
  run.attempts.push_back(retry);
  auto cells = cell_states(run, {});
  CHECK(cells[0].shown_id == "50_0");
  CHECK(cells[1].shown_id == "60_1");
  CHECK(array_ids(run) == std::vector<std::string>{"50", "60"});
}

TEST_CASE("status_grid: final cells' ends go into the ledger once, the array's own end when all have one") {
  test::TempDir dir;
  Run run = test::make_local_cpu_run(dir.path);
  std::vector<Job> records = parse_sacct(fixture("24.11", "array-finished-sacct.txt"));
  std::string array = submission_id(records.front());
  Run g = grid_run(4, array);
  run.grid = g.grid;
  update_ledger(run, [&](std::vector<Attempt>& all) { all.push_back(g.attempts.front()); });
  std::vector<CellState> cells = cell_states(run, records);
  // A controller that did not answer proves nothing.
  CHECK(record_cell_ends(run, cells, false, 100) == 0);
  CHECK(record_cell_ends(run, cells, true, 100) == 4);
  Run again = load_run(run.dir);
  again.grid = g.grid;
  const Attempt& a = again.attempts.back();
  REQUIRE(a.task_ends.size() == 4);
  REQUIRE(a.end);
  CHECK(a.end->job.state == JobState::Failed);
  CHECK(a.end->job.id == array);
  CHECK(array_ids(again, true).empty());
  // From now on the cells come from the ledger, with no record from Slurm.
  auto from_ledger = cell_states(again, {});
  CHECK(from_ledger[1].job.state == JobState::Failed);
  CHECK(from_ledger[1].job.source == "ledger");
  CHECK(grid_summary(from_ledger, 2) == "4 cells: 3 done, 1 failed");
  CHECK(record_cell_ends(again, from_ledger, true, 200) == 0);
}

TEST_CASE("status_grid: an array split below MaxArraySize maps its tasks back to their cells") {
  Run run = grid_run(6, "70");
  run.attempts.front().array = "0-3%2";
  Attempt second = run.attempts.front();
  second.token = "tok2";
  second.job_id = "80";
  second.array = "0-1%2";
  second.array_offset = 4;
  run.attempts.push_back(second);
  Job task;
  task.id = "81";
  task.array_job_id = "80";
  task.array_task_id = 1;
  task.state = JobState::Running;
  task.source = "squeue";
  auto cells = cell_states(run, {task});
  CHECK(cells[5].shown_id == "80_1");
  CHECK(cells[5].job.state == JobState::Running);
  CHECK(cells[4].shown_id == "80_0");
  CHECK(cells[3].shown_id == "70_3");
  CHECK(run.attempts.back().array_cells() == std::vector<int>{4, 5});
}

TEST_CASE("status_grid: an array whose every cell a retry took over gets its ends from its own records") {
  test::TempDir dir;
  Run run = test::make_local_cpu_run(dir.path);
  Run g = grid_run(2, "300");
  run.grid = g.grid;
  Attempt retry = g.attempts.front();
  retry.token = "tok2";
  retry.job_id = "400";
  update_ledger(run, [&](std::vector<Attempt>& all) {
    all.push_back(g.attempts.front());
    all.push_back(retry);
  });
  auto record = [](const std::string& array, int task, JobState state) {
    Job j;
    j.id = array + std::to_string(task);  // a task's own id
    j.array_job_id = array;
    j.array_task_id = task;
    j.state = state;
    j.source = "sacct";
    return j;
  };
  std::vector<Job> records = {record("300", 0, JobState::Failed), record("300", 1, JobState::Failed),
                              record("400", 0, JobState::Completed), record("400", 1, JobState::Completed)};
  std::vector<CellState> cells = cell_states(run, records);
  REQUIRE(cells[0].attempt->job_id == "400");
  // Without the records only the cells' own (the retry's) ends: 300 would be asked forever.
  CHECK(record_cell_ends(run, cells, true, 100, {}, records) == 4);
  Run again = load_run(run.dir);
  again.grid = g.grid;
  CHECK(array_ids(again, true).empty());
  CHECK(again.attempts[again.attempts.size() - 2].end->job.state == JobState::Failed);
  CHECK(again.attempts.back().end->job.state == JobState::Completed);
  // Squeue still listing the superseded array: its ends are not final yet.
  Run other = test::make_local_cpu_run(dir.path + "/b");
  other.grid = g.grid;
  update_ledger(other, [&](std::vector<Attempt>& all) {
    all.push_back(g.attempts.front());
    all.push_back(retry);
  });
  Job listed = record("300", 0, JobState::Failed);
  listed.source = "squeue";
  records.insert(records.begin(), listed);
  CHECK(record_cell_ends(other, cell_states(other, records), true, 100, {}, records) == 2);
}
