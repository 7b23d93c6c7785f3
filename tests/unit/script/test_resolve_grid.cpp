// A grid spec resolved as `gen` and `sweep` read it (resolve.hpp's
// load_and_resolve_grid): every cell resolved as its own run, the grid's
// fields under grid:, and a cell's errors at their lines.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "catch.hpp"

#include "helpers.hpp"
#include "script/resolve.hpp"
#include "script/resolve_grid.hpp"
#include "spec/grid.hpp"
#include "spec/grid_read.hpp"
#include "spec/spec.hpp"

using namespace ddpctl;
using ddpctl::test::user_error_of;

namespace {

const char* kGridSpecBase =
    "name: g\n"
    "cluster: local\n"
    "partition: cpu\n"
    "gpus_per_node: 0\n"
    "procs_per_node: 1\n"
    "time: '00:10:00'\n"
    "trainer: {model: smallcnn, data: synthetic, epochs: 1, lr: 0.1}\n";

std::vector<std::string> names(const Grid& g) {
  std::vector<std::string> out;
  for (const auto& c : g.cells) out.push_back(c.name);
  return out;
}

// A spec file of the local cluster in a temporary folder (its profile found
// from the source tree's configs/clusters/).
std::string write_spec(const ddpctl::test::TempDir& dir, const std::string& text) {
  std::string path = dir.path + "/s.yaml";
  std::ofstream(path) << "cluster: " << ddpctl::test::source_dir() << "/configs/clusters/local.yaml\n" << text;
  return path;
}

}  // namespace

TEST_CASE("grid: every cell is resolved as its own run, a bad value is refused naming the cell and the grid's line") {
  ddpctl::test::TempDir dir;
  std::string body = std::string(kGridSpecBase).substr(std::string(kGridSpecBase).find("partition"));
  std::string path = write_spec(dir, "name: g\n" + body + "grid:\n  nodes: [1, 2]\n  trainer.lr: [0.1, 0.2]\n");
  ResolvedGrid r = load_and_resolve_grid(path, {});
  REQUIRE(r.cells.size() == 4);
  CHECK(r.cells[2].shapes.at(0).nodes == 2);
  CHECK(r.grid.cells[2].name == "nodes=2,lr=0.1");

  path = write_spec(dir, "name: g\n" + body + "grid:\n  nodes: [1, 0]\n  trainer.seed: [1, 2]\n");
  std::string err = user_error_of([&] { load_and_resolve_grid(path, {}); });
  INFO(err);
  CHECK(err.find("s.yaml:9:14: nodes: '0' must be an integer from 1 to 100000 (cells nodes=0,seed=1; nodes=0,seed=2)") !=
        std::string::npos);
  CHECK(err.find("nodes=1") == std::string::npos);

  // A grid spec is refused by what runs one spec, with the way to run it.
  err = user_error_of([&] { load_and_resolve(path, {}); });
  CHECK(err.find("this spec is a grid of runs: `ddpctl sweep SPEC` submits its cells") != std::string::npos);
}

TEST_CASE("grid: exclude: include: and max_parallel: are the grid's under grid: and exclude: at the top is the nodes'") {
  ddpctl::test::TempDir dir;
  std::string body = std::string(kGridSpecBase).substr(std::string(kGridSpecBase).find("partition"));
  // Read as gen and sweep read it: the whole spec, then every cell.
  std::string path = write_spec(dir, "name: g\n" + body +
                                         "exclude: g1\n"
                                         "grid:\n  env.A: ['1', '2', '3']\n  exclude:\n    - {env.A: '1'}\n"
                                         "  include:\n    - {env.A: '3', trainer.seed: 7}\n  max_parallel: 2\n");
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(parse_run_spec(path, text).has_grid);
  ResolvedGrid r = load_and_resolve_grid(path, {});
  CHECK(names(r.grid) == std::vector<std::string>{"A=2", "A=3,seed=7"});
  CHECK(r.grid.max_parallel == 2);
  REQUIRE(r.cells.size() == 2);
  for (const auto& cell : r.cells) {
    const auto& d = cell.shapes.at(0).directives;
    CHECK(std::find(d.begin(), d.end(), "--exclude=g1") != d.end());
  }
}

TEST_CASE("grid: errors in a cell's document name the line, and an empty mapping says so") {
  ddpctl::test::TempDir dir;
  std::string body = std::string(kGridSpecBase).substr(std::string(kGridSpecBase).find("partition"));
  // A key that is no field, set by the grid: at the grid's line.
  std::string err = user_error_of(
      [&] { load_and_resolve_grid(write_spec(dir, "name: g\n" + body + "grid:\n  trainer_lr: [0.1, 0.2]\n"), {}); });
  CHECK_THAT(err, Catch::Contains("s.yaml:9:16: unknown field 'trainer_lr' (did you mean 'trainer'?)"));
  err = user_error_of(
      [&] { load_and_resolve_grid(write_spec(dir, "name: g\n" + body + "grid:\n  trainer.lrr: [0.1]\n"), {}); });
  CHECK_THAT(err, Catch::Contains("s.yaml:9:17: trainer: unknown field 'lrr'"));
  // A variable the cell cannot set: at the grid's line, naming the cell.
  err = user_error_of(
      [&] { load_and_resolve_grid(write_spec(dir, "name: g\n" + body + "grid:\n  env.DDPCTL_CELL: [a]\n"), {}); });
  CHECK_THAT(err, Catch::Contains("s.yaml:9:21: env: DDPCTL_CELL is reserved for ddpctl (cell DDPCTL_CELL=a)"));
  auto read = [&](const std::string& tail) {
    return user_error_of([&] { read_grid(parse_yaml_document("s.yaml", std::string(kGridSpecBase) + tail, "run spec")); });
  };
  CHECK_THAT(read("grid: {}\n"), Catch::Contains("s.yaml:8:7: grid: expected a mapping of field paths to lists of "
                                                  "values (e.g. `trainer.lr: [0.1, 0.01]`), got an empty mapping ({})"));
  CHECK_THAT(read("grid:\n  include: [{}]\n"),
             Catch::Contains("s.yaml:9:13: grid.include[0]: expected a mapping of field paths to values (a partial "
                             "cell: `{trainer.lr: 0.1}`), got an empty mapping ({})"));
  CHECK_THAT(read("grid:\n  env.A: []\n"), Catch::Contains("grid.env.A: expected a non-empty list of values, got an "
                                                            "empty list ([])"));
}
