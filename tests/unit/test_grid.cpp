#include <filesystem>
#include <fstream>

#include "catch.hpp"

#include "grid.hpp"
#include "helpers.hpp"
#include "resolve.hpp"
#include "spec.hpp"

using namespace ddpctl;
using ddpctl::test::user_error_of;

namespace {

const char* kBase =
    "name: g\n"
    "cluster: local\n"
    "partition: cpu\n"
    "gpus_per_node: 0\n"
    "procs_per_node: 1\n"
    "time: '00:10:00'\n"
    "trainer: {model: smallcnn, data: synthetic, epochs: 1, lr: 0.1}\n";

Grid grid_of(const std::string& text) {
  YamlDocument doc = parse_yaml_document("s.yaml", text, "run spec");
  auto g = read_grid(doc);
  REQUIRE(g);
  return *g;
}

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

TEST_CASE("grid: every combination is a cell, the first key varying slowest, named by the keys' last parts") {
  Grid g = grid_of(std::string(kBase) + "grid:\n  trainer.lr: [0.1, 0.01]\n  trainer.seed: [1, 2, 3]\nmax_parallel: 2\n");
  CHECK(names(g) == std::vector<std::string>{"lr=0.1,seed=1", "lr=0.1,seed=2", "lr=0.1,seed=3", "lr=0.01,seed=1",
                                            "lr=0.01,seed=2", "lr=0.01,seed=3"});
  REQUIRE(g.keys.size() == 2);
  CHECK(g.keys[0].path == "trainer.lr");
  CHECK(g.keys[0].name == "lr");
  CHECK(g.max_parallel == 2);
  CHECK(g.cells[4].index == 4);
  CHECK(g.cells[4].value_of("trainer.seed") == "2");
}

TEST_CASE("grid: keys that end alike are named by their whole path") {
  Grid g = grid_of(std::string(kBase) + "grid:\n  trainer.lr: [0.1]\n  env.lr: [a, b]\n");
  CHECK(names(g) == std::vector<std::string>{"trainer.lr=0.1,env.lr=a", "trainer.lr=0.1,env.lr=b"});
}

TEST_CASE("grid: exclude drops matching cells, include extends matching cells or adds its own (GitHub's rules)") {
  Grid g = grid_of(std::string(kBase) +
                   "grid:\n  trainer.lr: [0.1, 0.01]\n  trainer.seed: [1, 2]\n"
                   "exclude:\n  - {trainer.lr: 0.01, trainer.seed: 2}\n"
                   "include:\n"
                   "  - {trainer.lr: 0.1, trainer.epochs: 5}\n"   // extends both lr=0.1 cells
                   "  - {trainer.lr: 0.5, trainer.seed: 1}\n");   // matches none: a cell of its own
  CHECK(names(g) == std::vector<std::string>{"lr=0.1,seed=1,epochs=5", "lr=0.1,seed=2,epochs=5", "lr=0.01,seed=1",
                                            "lr=0.5,seed=1"});
}

TEST_CASE("grid: an include list alone is a list of cells (what `sweep:` of shapes was)") {
  Grid g = grid_of(std::string(kBase) +
                   "include:\n  - {nodes: 1, procs_per_node: 1}\n  - {nodes: 1, procs_per_node: 2}\n  - {nodes: 2}\n");
  CHECK(names(g) == std::vector<std::string>{"nodes=1,procs_per_node=1", "nodes=1,procs_per_node=2", "nodes=2"});
}

TEST_CASE("grid: mistakes are refused at their line") {
  auto err = [&](const std::string& tail) {
    return user_error_of([&] { read_grid(parse_yaml_document("s.yaml", std::string(kBase) + tail, "run spec")); });
  };
  CHECK(err("grid:\n  trainer.lr: []\n").find("s.yaml:9:15: grid.trainer.lr: expected a non-empty list") !=
        std::string::npos);
  CHECK(err("grid:\n  trainer.lr: 0.1\n").find("expected a non-empty list of values, got the value") != std::string::npos);
  CHECK(err("grid:\n  trainer.lr: [0.1, 0.1]\n").find("'0.1' is in this list twice") != std::string::npos);
  CHECK(err("grid:\n  name: [a, b]\n").find("a grid cannot vary `name`") != std::string::npos);
  CHECK(err("grid:\n  'trainer lr': [1]\n").find("'trainer lr' is not a field path") != std::string::npos);
  CHECK(err("grid: {trainer.lr: [1, 2]}\nexclude:\n  - {trainer.lr: 3}\n").find("s.yaml:10:5: exclude[0]: matches no cell") !=
        std::string::npos);
  CHECK(err("grid: {trainer.lr: [1, 2]}\nexclude:\n  - {trainer.seed: 1}\n").find("is not a key of grid:") !=
        std::string::npos);
  CHECK(err("grid: {trainer.lr: [1]}\nexclude:\n  - {trainer.lr: 1}\n").find("every cell of the grid is excluded") !=
        std::string::npos);
  CHECK(err("grid: {trainer.lr: [1]}\nmax_parallel: 0\n").find("max_parallel: expected a whole number") != std::string::npos);
  CHECK(err("max_parallel: 2\n").find("`max_parallel` needs a `grid:`") != std::string::npos);
  CHECK(err("include:\n  - {nodes: 1}\n  - {nodes: 1}\n").find("two cells are both 'nodes=1'") != std::string::npos);
  CHECK(err("grid:\n  a: [1, 2]\n  b: [1, 2]\n  c: [1, 2]\n  d: [1, 2]\n  e: [1, 2]\n  f: [1, 2]\n  g: [1, 2]\n"
            "  h: [1, 2]\n  i: [1, 2]\n  j: [1, 2]\n  k: [1, 2]\n  l: [1, 2]\n  m: [1, 2]\n  n: [1, 2]\n  o: [1, 2]\n"
            "  p: [1, 2]\n  q: [1, 2]\n")
            .find("more than 100000 cells") != std::string::npos);
}

TEST_CASE("grid: placeholders take the cell's values, braces that are not ours are left alone") {
  Grid g = grid_of(std::string(kBase) + "grid:\n  trainer.lr: [0.1]\n  env.SEED: [7]\n");
  const GridCell& c = g.cells[0];
  std::string problem;
  CHECK(replace_placeholders("--lr={lr}", g, c, &problem) == "--lr=0.1");
  CHECK(replace_placeholders("{trainer.lr}/{SEED}/{cell}", g, c, &problem) == "0.1/7/lr=0.1,SEED=7");
  CHECK_FALSE(replace_placeholders("${HOME} {\"a\": 1} awk '{print $1}'", g, c, &problem));
  CHECK(replace_placeholders("{{lr}}", g, c, &problem) == "{lr}");
  CHECK(problem.empty());
  CHECK_FALSE(replace_placeholders("--lr={lrr}", g, c, &problem));
  CHECK(problem.find("{lrr} names no key of the grid (did you mean 'lr'?)") != std::string::npos);
}

TEST_CASE("grid: a cell's document has its values at their paths, placeholders replaced, a checkpoint folder of its own") {
  std::string text = std::string(kBase) +
                     "env: {OUT: 'run-{cell}'}\n"
                     "grid:\n  trainer.lr: [0.1, 0.02]\n  trainer.checkpoint_dir: [/ck]\n";
  YamlDocument doc = parse_yaml_document("s.yaml", text, "run spec");
  Grid g = *read_grid(doc);
  YamlDocument cell = cell_document("s.yaml", text, {}, g, g.cells[1]);
  CHECK_FALSE(cell.root["grid"].IsDefined());
  CHECK(cell.root["trainer"]["lr"].Scalar() == "0.02");
  CHECK(cell.root["trainer"]["lr"].Mark().line + 1 == 10);  // the grid's line
  CHECK(cell.root["trainer"]["checkpoint_dir"].Scalar() == "/ck/lr=0.02,checkpoint_dir=_ck");
  CHECK(cell.root["env"]["OUT"].Scalar() == "run-lr=0.02,checkpoint_dir=/ck");
  // The base document is untouched: each cell is parsed anew.
  CHECK(doc.root["trainer"]["lr"].Scalar() == "0.1");
  RunSpec spec = parse_run_spec_document(cell);
  CHECK(std::find(spec.trainer_args.begin(), spec.trainer_args.end(), "--lr=0.02") != spec.trainer_args.end());
  CHECK_FALSE(spec.has_grid);
}

TEST_CASE("grid: an unknown placeholder in a list command is an error at its line") {
  std::string text =
      "name: g\ncluster: local\ngpus_per_node: 0\nprocs_per_node: 1\n"
      "command: [python3, train.py, --lr, '{lr}', --wd, '{wd}']\n"
      "grid: {env.LR: [1]}\n";
  YamlDocument doc = parse_yaml_document("s.yaml", text, "run spec");
  Grid g = *read_grid(doc);
  std::string err = user_error_of([&] { cell_document("s.yaml", text, {}, g, g.cells[0]); });
  CHECK(err.find("s.yaml:5:36: command[3]: {lr} names no key of the grid") != std::string::npos);
  CHECK(err.find("command[5]: {wd} names no key") != std::string::npos);
}

TEST_CASE("grid: the cell's variables name it and its values") {
  Grid g = grid_of(std::string(kBase) + "grid:\n  trainer.lr: [0.1]\n  env.batch-size: [8]\n");
  auto env = cell_environment(g, g.cells[0]);
  REQUIRE(env.size() == 3);
  CHECK(env[0] == std::pair<std::string, std::string>{"DDPCTL_CELL", "lr=0.1,batch-size=8"});
  CHECK(env[1] == std::pair<std::string, std::string>{"DDPCTL_GRID_LR", "0.1"});
  CHECK(env[2] == std::pair<std::string, std::string>{"DDPCTL_GRID_BATCH_SIZE", "8"});
}

TEST_CASE("grid: every cell is resolved as its own run, a bad value is refused naming the cell and the grid's line") {
  ddpctl::test::TempDir dir;
  std::string body = std::string(kBase).substr(std::string(kBase).find("partition"));
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
