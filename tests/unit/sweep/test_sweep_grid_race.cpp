// Race, then sweep (docs/race.md) through a scripted Slurm (fake_runner.hpp):
// the grid's first cell races every shape as a one-task array, the other
// cells wait for the winner and then go as one array on its shape, once,
// never after a cancel. The claim itself (mkdir in the script) and the
// winner's own `sweep continue` run on the real clusters in
// tests/slurm/test_sweep_grid_race.sh.
#include <algorithm>
#include <filesystem>

#include "catch.hpp"

#include "fake_runner.hpp"
#include "base/files.hpp"
#include "fixtures.hpp"
#include "helpers.hpp"
#include "runs/ledger.hpp"
#include "explain/race.hpp"
#include "script/resolve_grid.hpp"
#include "runs/run_store.hpp"
#include "explain/status_grid.hpp"
#include "sweep/grid_arrays.hpp"
#include "sweep/grid_continuation.hpp"
#include "race/race_waiting.hpp"
#include "sweep/sweep_grid.hpp"

using namespace ddpctl;
namespace fs = std::filesystem;

namespace {

const char* kRacedGrid =
    "alternatives:\n  - {partition: a100-80gb, label: a100}\n"
    "grid:\n  env.LR: ['0.1', '0.2']\n  env.SEED: [1, 2]\n  max_parallel: 2\n";

struct RaceGridFixture {
  test::TempDir tmp;
  test::FakeSlurm slurm;
  test::RecordingOutput out;
  SweepRequest req;
  explicit RaceGridFixture(const std::string& extra = kRacedGrid) {
    req.spec = test::write_one_shape_spec(tmp.path, "rs", extra);
    req.runs_root = tmp.path + "/runs";
    req.templates_dir = test::source_dir() + "/templates";
    req.preflight = false;
    req.snapshot = false;
  }
  Run sweep() {
    run_grid_sweep(req, slurm.ctx, out);
    auto runs = list_runs(req.runs_root);
    REQUIRE(runs.size() == 1);
    return runs[0];
  }
  // The argv of the n-th sbatch call (0-based).
  std::vector<std::string> sbatch(size_t n) const {
    size_t seen = 0;
    for (const auto& c : slurm.runner.calls)
      if (!c.empty() && c[0] == "sbatch" && seen++ == n) return c;
    return {};
  }
};

bool has(const std::vector<std::string>& argv, const std::string& word) {
  return std::find(argv.begin(), argv.end(), word) != argv.end();
}
bool ends_with(const std::vector<std::string>& argv, const std::string& tail) {
  return !argv.empty() && argv.back().size() >= tail.size() &&
         argv.back().compare(argv.back().size() - tail.size(), tail.size(), tail) == 0;
}


}  // namespace

TEST_CASE("race then sweep: the first cell races every shape as a one-task array, the other cells wait") {
  RaceGridFixture f;
  Run run = f.sweep();
  REQUIRE(f.slurm.runner.count("sbatch") == 2);
  // Task 0 of each shape's array script, told to run the race's script ($1 $2 = 0 race).
  for (size_t n : {0, 1}) {
    std::vector<std::string> argv = f.sbatch(n);
    CHECK(has(argv, "--array=0"));
    REQUIRE(argv.size() > 3);
    CHECK(argv[argv.size() - 2] == "0");
    CHECK(argv.back() == "race");
    CHECK(argv[argv.size() - 3].find(n == 0 ? "rs-1x1.array.sbatch" : "rs-a100.array.sbatch") != std::string::npos);
  }
  REQUIRE(run.grid);
  CHECK(run.grid->raced);
  CHECK(read_race(run).job_of_label() == std::map<std::string, std::string>{{"1x1", "100"}, {"a100", "101"}});
  for (const auto& a : run.attempts) CHECK(a.race);

  // Each shape's array runs its own cell scripts; only cell 0's race, its
  // winner submits the rest and is never raced again.
  std::string array = read_file(run.dir + "/rs-a100.array.sbatch");
  CHECK(array.find("/cells/a100/$ddpctl_cell.sh") != std::string::npos);
  CHECK(array.find("if [ \"${2:-}\" = race ]; then ddpctl_cell_script=") != std::string::npos);
  std::string first = read_file(run.dir + "/cells/1x1/0.race.sh");
  CHECK(first.find("sweep continue") != std::string::npos);
  CHECK(first.find("race-again") == std::string::npos);
  CHECK(first.find("ddpctl_race=") != std::string::npos);
  // A retry of the first cell runs it plainly: a claim already won would make it stand down.
  CHECK(read_file(run.dir + "/cells/1x1/0.sh").find("ddpctl_race=") == std::string::npos);
  CHECK(read_file(run.dir + "/cells/a100/3.sh").find("ddpctl_race=") == std::string::npos);
  CHECK(read_file(run.dir + "/cells/a100/3.sh").find("#SBATCH --partition=a100-80gb") != std::string::npos);

  std::vector<CellState> cells = cell_states(run, {});
  REQUIRE(cells.size() == 4);
  CHECK(cells[0].racing.size() == 2);
  CHECK(cells[0].attempt->job_id == "100");
  for (int i = 1; i < 4; ++i) {
    CHECK(cells[static_cast<size_t>(i)].attempt == nullptr);
    CHECK(cells[static_cast<size_t>(i)].waits_for_race);
  }
  CHECK(grid_summary(cells, 2).find("3 waiting for the race") != std::string::npos);
}

TEST_CASE("race then sweep: the winner's shape takes the other cells as one array, once, whoever asks") {
  RaceGridFixture f;
  Run run = f.sweep();
  GridContinuation c = continue_raced_grid(run, f.slurm.ctx, f.out);
  CHECK_FALSE(c.submitted);
  CHECK(c.why_not == "cell LR=0.1,SEED=1's race has no winner yet");
  CHECK(waiting_act_notes(f.req.runs_root, {}, f.slurm.clock.now(), f.slurm.ctx.slurm).empty());
  CHECK(f.slurm.runner.count("sbatch") == 2);

  test::claim_race(run, "101", "a100");
  // status (without targets) finds the sweep by its files and only reads:
  // while the winning job's own `sweep continue` may still run it says
  // nothing, after that it names the command; it never submits.
  CHECK(waiting_act_notes(f.req.runs_root, {}, f.slurm.clock.now(), f.slurm.ctx.slurm).empty());
  f.slurm.clock.mono += 11 + kGridContinueGraceS;  // the claim was at epoch + 10: now over the grace
  CHECK(waiting_act_notes(f.req.runs_root, {}, f.slurm.clock.now(), f.slurm.ctx.slurm) ==
        std::vector<std::string>{"sweep " + run.id +
                                 ": cell LR=0.1,SEED=1's race was won by shape a100 (job 101), but its other 3 "
                                 "cell(s) are not submitted (the job's `sweep continue` did not run: see its .err "
                                 "log); `ddpctl sweep continue " +
                                 run.id + "` submits them (status only reads)"});
  CHECK(f.slurm.runner.count("sbatch") == 2);
  // `ddpctl sweep continue`.
  CHECK(continue_raced_grid(run, f.slurm.ctx, f.out).submitted);
  REQUIRE(f.slurm.runner.count("sbatch") == 3);
  CHECK(waiting_act_notes(f.req.runs_root, {}, f.slurm.clock.now(), f.slurm.ctx.slurm).empty());
  CHECK(has(f.sbatch(2), "--array=1-3%2"));
  CHECK(ends_with(f.sbatch(2), "rs-a100.array.sbatch"));  // no offset, not the race

  // The job's own `sweep continue`, a second login node: nothing more.
  run = load_run(run.dir);
  c = continue_raced_grid(run, f.slurm.ctx, f.out);
  CHECK_FALSE(c.submitted);
  CHECK(c.why_not == "the other cells were already submitted on a100 (job array 102)");
  CHECK(f.slurm.runner.count("sbatch") == 3);

  // Every cell now runs on the winner: cell 0 in the winner's job, the rest in the array.
  for (const auto& cell : run.grid->cells) CHECK(cell.shape == "a100");
  std::vector<CellState> cells = cell_states(run, {});
  CHECK(cells[0].racing.empty());
  CHECK(cells[0].attempt->job_id == "101");
  CHECK(cells[0].shown_id == "101_0");
  CHECK(cells[3].attempt->job_id == "102");
  CHECK(cells[3].shown_id == "102_3");
  CHECK_FALSE(cells[3].waits_for_race);
}

TEST_CASE("race then sweep: a sweep cancelled while it raced submits nothing more") {
  RaceGridFixture f;
  Run run = f.sweep();
  update_ledger(run, [](std::vector<Attempt>& all) {
    for (auto& a : all) a.cancel_requested_at = "2026-11-26T10:00:00Z";
  });
  test::claim_race(run, "100", "1x1");  // the winner claimed just before scancel reached it
  GridContinuation c = continue_raced_grid(run, f.slurm.ctx, f.out);
  CHECK_FALSE(c.submitted);
  CHECK(c.why_not.find("the sweep was cancelled at 2026-11-26T10:00:00Z while cell LR=0.1,SEED=1 raced") !=
        std::string::npos);
  CHECK(f.slurm.runner.count("sbatch") == 2);
  // Nor does status point at `sweep continue`.
  f.slurm.clock.mono += 1000;
  CHECK(waiting_act_notes(f.req.runs_root, {}, f.slurm.clock.now(), f.slurm.ctx.slurm).empty());
}

TEST_CASE("race then sweep: the losers' ends come from the race's files once squeue has let them go") {
  RaceGridFixture f;
  Run run = f.sweep();
  test::claim_race(run, "100", "1x1");
  write_file_atomic(race_dir(run) + "/cancelled.101", "101 1795300011\n");
  // Still listed as pending: not final.
  Job pending;
  pending.id = "101";
  pending.state = JobState::Pending;
  CHECK(record_race_losers(run, {pending}, true, 100) == 0);
  // A controller that did not answer proves nothing.
  CHECK(record_race_losers(run, {}, false, 100) == 0);
  CHECK(record_race_losers(run, {}, true, 100) == 1);
  run = load_run(run.dir);
  const Attempt* loser = job_attempt(run, "101");
  REQUIRE(loser);
  REQUIRE(loser->end);
  CHECK(loser->end->job.state == JobState::Cancelled);
  CHECK(loser->end->job.reason == "cancelled by the race's winner");
  CHECK_FALSE(job_attempt(run, "100")->end);  // the winner's end is its cell's
  CHECK(array_ids(run, true) == std::vector<std::string>{"100"});
  CHECK(record_race_losers(run, {}, true, 200) == 0);
}

TEST_CASE("race then sweep: cells must agree on each raced shape") {
  test::TempDir tmp;
  std::string spec = test::write_one_shape_spec(
      tmp.path, "rs", "alternatives:\n  - {partition: a100-80gb, label: a100}\ngrid:\n  mem: [1G, 2G]\n");
  ResolvedGrid g = load_and_resolve_grid(spec, {});
  std::string err = test::user_error_of([&] { group_cells(g); });
  INFO(err);
  CHECK(err.find("rs.yaml:") != std::string::npos);
  CHECK(err.find("the cells must agree on each shape: cell mem=2G's shape 1x1 has other #SBATCH lines than cell "
                 "mem=1G's") != std::string::npos);
}
