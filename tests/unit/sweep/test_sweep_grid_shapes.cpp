// A grid of shapes swept (sweep.cpp, sweep_grid.cpp, sweep_retry.cpp): the
// note `sweep`/`gen` print for the old `sweep:` spelling, and max_parallel: 1
// over several shapes' arrays, each after the previous one ends, retry too.
#include <algorithm>
#include <filesystem>
#include <fmt/format.h>

#include "catch.hpp"

#include "fake_runner.hpp"
#include "base/files.hpp"
#include "fixtures.hpp"
#include "grid_scaling_fixture.hpp"
#include "helpers.hpp"
#include "runs/run_store.hpp"
#include "sweep/sweep.hpp"
#include "sweep/sweep_grid.hpp"
#include "sweep/sweep_retry.hpp"

using namespace ddpctl;
namespace fs = std::filesystem;

TEST_CASE("sweep: the old spelling: the note names its include: equivalent", "[report_grid_scaling]") {
  test::TempDir dir;
  std::string spec = dir.path + "/s.yaml";
  write_file_atomic(spec, "name: s\ncluster: local\ngpus_per_node: 0\nprocs_per_node: 1\ncommand: [x]\nsweep:\n"
                          "  - {nodes: 1, procs_per_node: 1}\n  - {nodes: 1, procs_per_node: 2, cpus_per_task: 2}\n"
                          "  - nodes: 2\n");
  std::string note = sweep_list_note(spec, true);
  INFO(note);
  CHECK(note.find("`sweep:` is the old spelling of a grid of shapes") == 0);
  CHECK(note.find("\n    grid:\n      include:\n        - {nodes: 1, procs_per_node: 1}\n        - {nodes: 1, "
                  "procs_per_node: 2, cpus_per_task: 2}\n        - {nodes: 2}\n      max_parallel: 1") !=
        std::string::npos);
  CHECK(note.find("as --one-at-a-time did") != std::string::npos);
  write_file_atomic(spec, "name: s\ncluster: local\ngpus_per_node: 0\nprocs_per_node: 1\ncommand: [x]\n");
  CHECK(sweep_list_note(spec, false).empty());
}

TEST_CASE("max_parallel: 1 over a grid of shapes: each shape's array after the previous one ends",
          "[report_grid_scaling]") {
  test::TempDir tmp;
  test::FakeSlurm slurm;
  test::RecordingOutput out;
  SweepRequest req;
  std::string extra = "grid:\n  include:\n    - {nodes: 1}\n    - {nodes: 2}\n    - {nodes: 3}\n";
  req.runs_root = tmp.path + "/runs";
  req.templates_dir = test::source_dir() + "/templates";
  req.preflight = false;
  req.snapshot = false;
  auto sbatches = [&] {
    std::vector<std::vector<std::string>> calls;
    for (const auto& c : slurm.runner.calls)
      if (!c.empty() && c[0] == "sbatch") calls.push_back(c);
    return calls;
  };
  auto has = [](const std::vector<std::string>& argv, const std::string& word) {
    return std::find(argv.begin(), argv.end(), word) != argv.end();
  };
  auto dependency = [](const std::vector<std::string>& argv) {
    for (const auto& a : argv)
      if (a.rfind("--dependency=", 0) == 0) return a;
    return std::string();
  };
  SECTION("max_parallel: 1: a chain, afterany of the array before") {
    req.spec = test::write_one_shape_spec(tmp.path, "chain", extra + "  max_parallel: 1\n");
    run_grid_sweep(req, slurm.ctx, out);
    auto calls = sbatches();
    REQUIRE(calls.size() == 3);
    CHECK(has(calls[0], "--array=0%1"));
    CHECK(dependency(calls[0]).empty());
    CHECK(dependency(calls[1]) == "--dependency=afterany:" + slurm.jobs.at(0).id);
    CHECK(dependency(calls[2]) == "--dependency=afterany:" + slurm.jobs.at(1).id);
    CHECK(std::any_of(out.lines.begin(), out.lines.end(), [&](const std::string& l) {
      return l.find("starts after job array " + slurm.jobs.at(0).id + " ends") != std::string::npos;
    }));
  }
  SECTION("sweep retry of several shapes with max_parallel: 1: chained the same way") {
    req.spec = test::write_one_shape_spec(tmp.path, "again", extra + "  max_parallel: 1\n");
    slurm.sbatch = test::FakeSlurm::Sbatch::Rejects;  // nothing was submitted: every cell is to retry
    CHECK_FALSE(test::user_error_of([&] { run_grid_sweep(req, slurm.ctx, out); }).empty());
    REQUIRE(sbatches().size() == 3);
    for (const auto& c : sbatches()) CHECK(dependency(c).empty());  // no array was made to wait for
    slurm.sbatch = test::FakeSlurm::Sbatch::Ok;
    RetryRequest retry;
    retry.sweep = "again";
    retry.runs_root = req.runs_root;
    retry.preflight = false;
    retry_grid_cells(retry, slurm.ctx, out);
    auto calls = sbatches();
    REQUIRE(calls.size() == 6);
    CHECK(dependency(calls[3]).empty());
    CHECK(dependency(calls[4]) == "--dependency=afterany:" + slurm.jobs.at(0).id);
    CHECK(dependency(calls[5]) == "--dependency=afterany:" + slurm.jobs.at(1).id);
  }
  SECTION("max_parallel: 2 (or none): each shape's array on its own, at once") {
    req.spec = test::write_one_shape_spec(tmp.path, "apart", extra + "  max_parallel: 2\n");
    run_grid_sweep(req, slurm.ctx, out);
    auto calls = sbatches();
    REQUIRE(calls.size() == 3);
    for (const auto& c : calls) CHECK(dependency(c).empty());
  }
}

