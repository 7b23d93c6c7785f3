// A grid raced across sites (docs/race.md "Across sites"), one site's side
// through a scripted Slurm (fake_runner.hpp): `ddpctl sweep SPEC --site HOST
// --coordinator ID` races the grid's first cell on that site's shapes (even
// one), its winner waits at the gate, and the other cells are submitted on
// the winning shape only once the coordinator's grant let it through. The
// gate's shell logic runs under stub commands in tests/script/test_race_gate.sh,
// both sites on real clusters in tests/slurm/test_race_across_sites.sh.
#include <algorithm>
#include <filesystem>

#include "catch.hpp"

#include "fake_runner.hpp"
#include "base/files.hpp"
#include "runs/race_gate_files.hpp"
#include "fixtures.hpp"
#include "helpers.hpp"
#include "runs/run_store.hpp"
#include "sweep/grid_continuation.hpp"
#include "race/race_waiting.hpp"
#include "sweep/sweep_grid.hpp"

using namespace ddpctl;

namespace {

const char* kSitedGrid =
    "on: u@a.org\n"
    "alternatives:\n  - {on: u@b.org, partition: a100-80gb, label: b-a100}\n"
    "grid:\n  env.LR: ['0.1', '0.2']\n  env.SEED: [1, 2]\n  max_parallel: 2\n";

struct SitedGridFixture {
  test::TempDir tmp;
  test::FakeSlurm slurm;
  test::RecordingOutput out;
  SweepRequest req;
  SitedGridFixture() {
    req.spec = test::write_one_shape_spec(tmp.path, "sg", kSitedGrid);
    req.runs_root = tmp.path + "/runs";
    req.templates_dir = test::source_dir() + "/templates";
    req.preflight = false;
    req.snapshot = false;
    req.across = {"u@a.org", "sg-20261129T000000Z-c00rd1", 120};
  }
};

}  // namespace

TEST_CASE("a grid raced across sites: one site races its first cell on its one shape, gated") {
  SitedGridFixture f;
  run_grid_sweep(f.req, f.slurm.ctx, f.out);
  auto runs = list_runs(f.req.runs_root);
  REQUIRE(runs.size() == 1);
  Run run = runs[0];
  // Only this site's shape, and still a race: one one-task array of cell 0.
  REQUIRE(f.slurm.runner.count("sbatch") == 1);
  REQUIRE(run.grid);
  CHECK(run.grid->raced);
  CHECK(read_race(run).job_of_label() == std::map<std::string, std::string>{{"1x1", "100"}});
  GateState gate = read_gate(run);
  CHECK(gate.is_gate);
  CHECK(gate.coordinator == "sg-20261129T000000Z-c00rd1");
  CHECK(gate.gate_s == 120);
  // The race's script: the claim, then the gate, and the rest only after it.
  std::string first = read_file(run.dir + "/cells/1x1/0.race.sh");
  size_t gate_at = first.find("waits at the gate");
  size_t continue_at = first.find("  ddpctl_continue_grid\n");
  REQUIRE(gate_at != std::string::npos);
  REQUIRE(continue_at != std::string::npos);
  CHECK(continue_at > gate_at);  // called once, after the gate let it through
  CHECK(first.find("  ddpctl_continue_grid\n", continue_at + 1) == std::string::npos);

  // The site's claim won: not enough, the coordinator has not granted it.
  test::claim_race(run, "100", "1x1");
  GridContinuation c = continue_raced_grid(run, f.slurm.ctx, f.out);
  CHECK_FALSE(c.submitted);
  CHECK_THAT(c.why_not, Catch::Matchers::Contains("the run races other sites") &&
                            Catch::Matchers::Contains("sg-20261129T000000Z-c00rd1"));
  f.slurm.clock.mono += 1000;  // long after the claim: status still says nothing, the job waits at its gate
  CHECK(waiting_act_notes(f.req.runs_root, {}, f.slurm.clock.now(), f.slurm.ctx.slurm).empty());
  CHECK(f.slurm.runner.count("sbatch") == 1);

  // Granted and through its gate: the other cells go as one array on its shape.
  write_file_atomic(gate_dir(run) + "/passed.100", "100 1x1 1795300020 0 10\n");
  c = continue_raced_grid(run, f.slurm.ctx, f.out);
  CHECK(c.submitted);
  CHECK(f.slurm.runner.count("sbatch") == 2);
}

TEST_CASE("a grid raced across sites: the site's part has its own identity, so each site sweeps once") {
  SitedGridFixture f;
  run_grid_sweep(f.req, f.slurm.ctx, f.out);
  run_grid_sweep(f.req, f.slurm.ctx, f.out);
  CHECK(f.slurm.runner.count("sbatch") == 1);
  CHECK(std::any_of(f.out.lines.begin(), f.out.lines.end(),
                    [](const std::string& l) { return l.rfind("already submitted", 0) == 0; }));
}
