// `ddpctl logs` (logs.hpp): a job's --rank picks its task's output; `logs SWEEP
// --cell NAME`: a grid cell's logs are its
// array task's, named by the task's own job id, found from Slurm's real
// records of an array (tests/unit/data/24.11/array-*, capture-array.sh).
#include "catch.hpp"

#include <filesystem>

#include "fake_runner.hpp"
#include "base/files.hpp"
#include "fixtures.hpp"
#include "helpers.hpp"
#include "runs/job_files.hpp"
#include "runs/ledger.hpp"
#include "logs/logs.hpp"
#include "script/resolve.hpp"
#include "runs/run_store.hpp"
#include "script/run_create.hpp"
#include "runs/task_logs.hpp"
#include "base/text.hpp"

using namespace ddpctl;
using test::exits;

namespace {

std::string log_fixture(const std::string& name) {
  return read_file(test::source_dir() + "/tests/unit/data/24.11/" + name);
}

// A sweep of `n` cells LR=0..LR=n-1 on disk whose one array made job
// `array` (--array=0-<n-1>%2), its logs in the temporary folder; squeue and
// sacct answer as Slurm 24.11 did for array 12 (running: tasks 0 and 1 as
// jobs 13 and 14, 2-5 pending) and array 16 (ended: task 1 failed).
struct SweepLogs {
  test::TempDir tmp;
  test::FakeRunner runner;
  test::FakeClock clock;
  test::FakeEnvironment env;
  SlurmClient slurm{runner};
  Context ctx{runner, slurm, clock, env, 0.5};
  test::RecordingOutput out;
  Run run;
  LogsRequest req;

  explicit SweepLogs(int n = 6, const std::string& array = "12") {
    std::string spec = test::write_one_shape_spec(tmp.path);
    run = create_run(tmp.path + "/runs", load_and_resolve(spec, {}), read_file(spec), {}, "hash",
                     {{"unit.sbatch", "#!/bin/bash\n"}});
    RunGrid grid;
    grid.keys = {{"env.LR", "LR"}};
    grid.max_parallel = 2;
    for (int i = 0; i < n; ++i)
      grid.cells.push_back({i, "LR=" + std::to_string(i), run.shapes.at(0).label, tmp.path + "/cell" + std::to_string(i),
                            {{"env.LR", std::to_string(i)}}});
    run.grid = grid;
    save_grid(run);
    update_ledger(run, [&](std::vector<Attempt>& attempts) {
      Attempt a;
      a.token = "tok";
      a.shape = run.shapes.at(0).label;
      a.outcome = Outcome::Submitted;
      a.job_id = array;
      a.array = "0-" + std::to_string(n - 1) + "%2";
      attempts.push_back(a);
    });
    answer("array-running-squeue.json", "array-running-sacct.txt");
    req.run = run.id;
    req.runs_root = tmp.path + "/runs";
  }
  void answer(const std::string& squeue, const std::string& sacct) {
    runner.on("squeue", {"--json"}, [doc = log_fixture(squeue)](const std::vector<std::string>&) { return exits(0, doc); });
    runner.on("sacct", {}, [rows = log_fixture(sacct)](const std::vector<std::string>&) { return exits(0, rows); });
  }
  // What a task's job wrote: its batch log and rank 0's step log.
  void write_logs(const std::string& job_id, const std::string& text) {
    std::string base = log_base(run.shapes.at(0), job_id);
    std::filesystem::create_directories(run.shapes.at(0).output_dir);
    write_file_atomic(job_files::batch_out(base), "batch of job " + job_id + "\n");
    write_file_atomic(job_files::step_log(base, 0, 0), text);
  }
  std::string error() {
    return test::user_error_of([&] { show_logs(req, ctx, out); });
  }
};

}  // namespace

TEST_CASE("logs of a grid's sweep: --cell picks a cell by name, without it, the cells are named") {
  SweepLogs f;
  CHECK_THAT(f.error(), Catch::Contains("is a grid's sweep of 6 cells, each with logs of its own: --cell NAME picks "
                                        "one; its cells are LR=0; LR=1; LR=2; LR=3; LR=4; LR=5"));
  f.req.cell = "LR=7";
  CHECK_THAT(f.error(), Catch::Contains("has no cell 'LR=7'") && Catch::Contains("did you mean"));
  SECTION("a sweep of many cells names the first ones and how many more") {
    SweepLogs many(30);
    CHECK_THAT(many.error(), Catch::Contains("LR=19 and 10 more (`ddpctl status " + many.run.id + "` lists them)"));
  }
  SECTION("a sweep of one cell needs no --cell") {
    SweepLogs one(1);
    const RunCell& c = pick_cell(one.req, one.run);
    CHECK(c.name == "LR=0");
  }
  SECTION("--cell on a run that is no sweep") {
    test::TempDir tmp;
    Run plain = test::make_local_cpu_run(tmp.path + "/runs");
    LogsRequest r;
    r.run = plain.id;
    r.runs_root = tmp.path + "/runs";
    r.cell = "LR=0";
    CHECK_THAT(test::user_error_of([&] { show_logs(r, f.ctx, f.out); }),
               Catch::Contains("is not a grid's sweep: it has no cells"));
  }
}

TEST_CASE("logs --cell: a running cell's logs are its task's own job's, a pending cell has none yet") {
  SweepLogs f;
  f.write_logs("13", "epoch 1 loss 0.5 of LR=0\n");
  f.write_logs("14", "epoch 1 loss 0.7 of LR=1\n");
  f.req.cell = "LR=1";
  show_logs(f.req, f.ctx, f.out);
  CHECK_THAT(f.out.raw_text, Catch::Contains("batch of job 14") && Catch::Contains("of LR=1"));
  CHECK_THAT(f.out.raw_text, !Catch::Contains("of LR=0"));
  // One squeue of the sweep's array; sacct not needed, squeue shows the cell.
  CHECK(f.runner.count("squeue") == 1);
  CHECK(f.runner.count("sacct") == 0);

  SECTION("--rank outside the cell's ranks") {
    f.req.rank = 5;
    CHECK_THAT(f.error(), Catch::Contains("rank 5 is outside this cell's 1 ranks (0-0)"));
  }
  SECTION("a cell pending in its array's collapsed record") {
    f.req.cell = "LR=3";
    CHECK_THAT(f.error(), Catch::Contains("cell LR=3 (12_3) is PENDING: it has written no log yet (`ddpctl logs " +
                                          f.run.id + " --cell 'LR=3' -f` waits for it to start)"));
  }
  SECTION("a cell never submitted") {
    update_ledger(f.run, [](std::vector<Attempt>& attempts) { attempts.at(0).array = "0-2%2"; });
    f.req.cell = "LR=4";
    CHECK_THAT(f.error(), Catch::Contains("cell LR=4 of sweep " + f.run.id + " was never submitted (`ddpctl sweep retry " +
                                          f.run.id + " --cells 'LR=4'`)"));
  }
}

TEST_CASE("logs --cell -f: a pending cell is waited for, then followed to its end") {
  // Array 16 of 4 cells: first cell 3 pending (squeue no longer lists the
  // array; sacct's pending record of task 3), then the array as it ended.
  SweepLogs f(4, "16");
  std::string pending = log_fixture("array-running-sacct.txt");
  pending = pending.substr(pending.find("12_[2-5%2]"));
  pending.replace(0, std::string("12_[2-5%2]").size(), "16_[3]");
  pending = pending.substr(0, pending.rfind('|') + 1) + "16\n";
  f.runner.on("squeue", {"--json"}, exits(1, "", "slurm_load_jobs error: Invalid job id specified\n"));
  f.runner.on("sacct", {}, [&pending](const std::vector<std::string>&) { return exits(0, pending); });
  f.req.cell = "LR=3";
  f.req.follow = true;
  int polls = 0;
  f.clock.on_sleep = [&] {
    if (++polls == 2) {
      // Task 3 ran as job 16 (the last task takes the array's own id).
      f.write_logs("16", "cell 3 trained\n");
      f.answer("array-finished-squeue.json", "array-finished-sacct.txt");
    }
  };
  show_logs(f.req, f.ctx, f.out);
  REQUIRE(f.out.lines.size() >= 2);
  CHECK(f.out.lines.front() == "==> cell LR=3 (16_3) is PENDING: waiting for it to start <==");
  CHECK_THAT(f.out.raw_text, Catch::Contains("batch of job 16") && Catch::Contains("cell 3 trained"));
  CHECK(f.out.lines.back() == "==> cell LR=3 (16_3) ended: COMPLETED <==");
  SECTION("a failed cell opens at its failing rank's output and says how it ended") {
    LogsRequest once = f.req;
    once.follow = false;
    once.cell = "LR=1";
    f.write_logs("18", "Traceback (most recent call last):\nValueError: lr too high\n");
    f.out = {};
    show_logs(once, f.ctx, f.out);
    REQUIRE_FALSE(f.out.lines.empty());
    CHECK_THAT(f.out.lines.front(), Catch::StartsWith("==> cell LR=1 (16_1) ended FAILED: "));
    CHECK_THAT(f.out.raw_text, Catch::Contains("ValueError: lr too high"));
  }
}

TEST_CASE("logs --rank of a job: a rank beyond the world size names the valid range, one inside it its task's output") {
  // The twin of the Slurm test logs_rank_out_of_range: 2 nodes of 2 ranks.
  test::SubmitFixture f;
  write_file_atomic(f.req.spec, "name: unit\ncluster: local\npartition: cpu\nnodes: 2\ngpus_per_node: 0\n"
                                "procs_per_node: 2\ntime: \"00:05:00\"\noutput_dir: " + f.tmp.path + "/logs\n"
                                "command: \"echo node $NODE_RANK here\"\n");
  SubmitResult r = f.submit();
  const RunShape& shape = r.run.shapes.at(0);
  std::string base = log_base(shape, "100");
  std::filesystem::create_directories(shape.output_dir);
  write_file_atomic(job_files::batch_out(base), "batch of job 100\n");
  for (int task = 0; task < 2; ++task)
    write_file_atomic(job_files::step_log(base, 0, task), "node " + std::to_string(task) + " here\n");
  LogsRequest req;
  req.run = r.run.id;
  req.runs_root = f.req.runs_root;
  test::RecordingOutput out;
  req.rank = 4;
  CHECK(test::user_error_of([&] { show_logs(req, f.slurm.ctx, out); }) ==
        "--rank: rank 4 is outside this job's 4 ranks (0-3)");
  for (int rank : {2, 3}) {  // both on the second node: task 1
    test::RecordingOutput shown;
    req.rank = rank;
    show_logs(req, f.slurm.ctx, shown);
    CHECK_THAT(join(shown.lines, "\n"), Catch::Contains("(training output, attempt 1, task 1)"));
    CHECK_THAT(shown.raw_text, Catch::Contains("node 1 here") && !Catch::Contains("node 0 here"));
  }
}
