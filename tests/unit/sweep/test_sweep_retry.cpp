// `sweep retry` (sweep_retry.hpp): which cells it chooses, by their whole
// names or as they ended in Slurm's real records (tests/unit/data), and what
// it refuses.
#include "catch.hpp"

#include <fmt/format.h>

#include "grid_run.hpp"
#include "helpers.hpp"
#include "slurm/slurm_parse_jobs.hpp"
#include "explain/status_grid.hpp"
#include "sweep/sweep_retry.hpp"

using namespace ddpctl;
using test::fixture;
using test::grid_run;

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
