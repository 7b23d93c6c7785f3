// A grid's cells as Slurm's real records of its arrays say (the captures of
// tests/unit/data/<version>/array-*, capture-array.sh), the sweep in one line,
// and the cells' ends kept in the ledger once final.
#include <filesystem>
#include <fmt/format.h>

#include "catch.hpp"

#include "base/files.hpp"
#include "helpers.hpp"
#include "script/runs.hpp"
#include "slurm/slurm_parse_jobs.hpp"
#include "explain/status_grid.hpp"
#include "workflows/grid_array_submit.hpp"
#include "workflows/sweep_retry.hpp"

using namespace ddpctl;

namespace {

std::string fixture(const std::string& version, const std::string& name) {
  return read_file(test::source_dir() + "/tests/unit/data/" + version + "/" + name);
}

// A run of `n` cells whose one array attempt made job `array_id` (--array=0-<n-1>%2).
Run grid_run(int n, const std::string& array_id) {
  Run run;
  run.id = "g-1";
  RunGrid grid;
  grid.keys = {{"env.LR", "LR"}};
  grid.max_parallel = 2;
  for (int i = 0; i < n; ++i) grid.cells.push_back({i, "LR=" + std::to_string(i), "1x1", "/x", {{"env.LR", std::to_string(i)}}});
  run.grid = grid;
  Attempt a;
  a.token = "tok";
  a.shape = "1x1";
  a.outcome = Outcome::Submitted;
  a.job_id = array_id;
  a.array = "0-" + std::to_string(n - 1) + "%2";
  run.attempts.push_back(a);
  return run;
}

}  // namespace

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

TEST_CASE("sweep_grid: cells past the site's MaxArraySize go in further arrays, task N running cell N + offset") {
  auto parts = split_array({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 4);
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].offset == 0);
  CHECK(parts[0].tasks == std::vector<int>{0, 1, 2, 3});
  CHECK(parts[1].offset == 4);
  CHECK(parts[1].tasks == std::vector<int>{0, 1, 2, 3});
  CHECK(parts[2].offset == 8);
  CHECK(parts[2].tasks == std::vector<int>{0, 1});
  // A retry's scattered cells: each part's tasks stay below the limit.
  parts = split_array({3, 9, 1500}, 1001);
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].tasks == std::vector<int>{3, 9});
  CHECK(parts[1].offset == 1001);
  CHECK(parts[1].tasks == std::vector<int>{499});
  // No limit known: one array.
  CHECK(split_array({0, 5000}, 0).size() == 1);
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

TEST_CASE("sweep retry --cells: a cell's whole name is that cell even where it holds a semicolon and other words are names separated by semicolons") {
  std::vector<std::string> names = {"A=a;b", "A=a", "A=b"};
  CHECK(cells_asked({"A=a;b"}, names) == std::vector<std::string>{"A=a;b"});
  CHECK(cells_asked({"A=a;A=b"}, names) == std::vector<std::string>{"A=a", "A=b"});
  CHECK(cells_asked({"A=a;b", "A=b;"}, names) == std::vector<std::string>{"A=a;b", "A=b"});
  CHECK(cells_asked({"x;;y"}, names) == std::vector<std::string>{"x", "y"});
}

namespace {

std::vector<std::string> chosen_names(const RetryChoice& c) {
  std::vector<std::string> names;
  for (const CellState* s : c.chosen) names.push_back(s->cell->name);
  return names;
}

}  // namespace

TEST_CASE("sweep retry chooses the cells that ended without completing, or those asked for, and names what refuses it") {
  std::vector<Job> finished = parse_sacct(fixture("24.11", "array-finished-sacct.txt"));
  Run run = grid_run(4, submission_id(finished.front()));
  std::vector<CellState> cells = cell_states(run, finished);
  SECTION("without --cells: the failed cell only") {
    RetryChoice c = choose_retry_cells(run, cells, {});
    CHECK(c.problems.empty());
    CHECK(chosen_names(c) == std::vector<std::string>{"LR=1"});
  }
  SECTION("--cells: a completed cell asked for is retried too, once however often it is named") {
    RetryChoice c = choose_retry_cells(run, cells, {"LR=0;LR=2", "LR=0"});
    CHECK(c.problems.empty());
    CHECK(chosen_names(c) == std::vector<std::string>{"LR=0", "LR=2"});
  }
  SECTION("--cells: a name that is no cell") {
    RetryChoice c = choose_retry_cells(run, cells, {"LR=9"});
    CHECK(c.chosen.empty());
    REQUIRE(c.problems.size() == 1);
    CHECK_THAT(c.problems[0], Catch::StartsWith("no cell 'LR=9'"));
  }
  SECTION("a cell never submitted is retried, one whose end Slurm does not say refuses the retry") {
    run.attempts.front().array = "0-2%2";  // cell 3 was never in an array
    RetryChoice c = choose_retry_cells(run, cell_states(run, {}), {});
    CHECK(chosen_names(c) == std::vector<std::string>{"LR=3"});
    REQUIRE(c.problems.size() == 3);
    CHECK(c.problems[0] == "cell LR=0 (" + run.attempts.front().job_id + "_0): Slurm does not say how it ended");
  }
  SECTION("a raced grid's cell without the race's winner has no shape to run on") {
    run.grid->cells[1].shape = "";
    RetryChoice c = choose_retry_cells(run, cells, {});
    REQUIRE(c.problems.size() == 1);
    CHECK(c.problems[0] == "cell LR=1: cell LR=0's race has no winner, so there is no shape to run it on; "
                           "`ddpctl sweep SPEC --again` races the shapes again");
  }
}

TEST_CASE("sweep retry refuses a cell still queued or running, and says how to cancel it") {
  std::vector<Job> records = parse_squeue_json(fixture("24.11", "array-running-squeue.json"));
  std::string array = submission_id(records.front());
  Run run = grid_run(6, array);
  std::vector<CellState> cells = cell_states(run, records);
  const CellState* running = nullptr;
  for (const auto& c : cells)
    if (c.job.state == JobState::Running) running = &c;
  REQUIRE(running);
  RetryChoice c = choose_retry_cells(run, cells, {running->cell->name});
  CHECK(c.chosen.empty());
  REQUIRE(c.problems.size() == 1);
  CHECK(c.problems[0] == fmt::format("cell {} ({}) is RUNNING: cancel it first (`ddpctl cancel g-1 --cell {}`)",
                                     running->cell->name, running->shown_id, running->cell->name));
}
