#include <filesystem>

#include "catch.hpp"

#include "spec/grid.hpp"
#include "spec/grid_read.hpp"
#include "spec/grid_cell.hpp"
#include "helpers.hpp"
#include "spec/spec.hpp"

using namespace ddpctl;
using ddpctl::test::user_error_of;

namespace {

const char* kGridBase =
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

}  // namespace

TEST_CASE("grid: every combination is a cell, the first key varying slowest, named by the keys' last parts") {
  Grid g = grid_of(std::string(kGridBase) + "grid:\n  trainer.lr: [0.1, 0.01]\n  trainer.seed: [1, 2, 3]\n  max_parallel: 2\n");
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
  Grid g = grid_of(std::string(kGridBase) + "grid:\n  trainer.lr: [0.1]\n  env.lr: [a, b]\n");
  CHECK(names(g) == std::vector<std::string>{"trainer.lr=0.1,env.lr=a", "trainer.lr=0.1,env.lr=b"});
}

TEST_CASE("grid: exclude drops matching cells, include extends matching cells or adds its own (GitHub's rules)") {
  Grid g = grid_of(std::string(kGridBase) +
                   "grid:\n  trainer.lr: [0.1, 0.01]\n  trainer.seed: [1, 2]\n"
                   "  exclude:\n    - {trainer.lr: 0.01, trainer.seed: 2}\n"
                   "  include:\n"
                   "    - {trainer.lr: 0.1, trainer.epochs: 5}\n"   // extends both lr=0.1 cells
                   "    - {trainer.lr: 0.5, trainer.seed: 1}\n");   // matches none: a cell of its own
  CHECK(names(g) == std::vector<std::string>{"lr=0.1,seed=1,epochs=5", "lr=0.1,seed=2,epochs=5", "lr=0.01,seed=1",
                                            "lr=0.5,seed=1"});
}

TEST_CASE("grid: an include list alone is a list of cells (what `sweep:` of shapes was)") {
  Grid g = grid_of(std::string(kGridBase) +
                   "grid:\n  include:\n    - {nodes: 1, procs_per_node: 1}\n    - {nodes: 1, procs_per_node: 2}\n"
                   "    - {nodes: 2}\n");
  CHECK(names(g) == std::vector<std::string>{"nodes=1,procs_per_node=1", "nodes=1,procs_per_node=2", "nodes=2"});
}

TEST_CASE("grid: mistakes are refused at their line") {
  auto err = [&](const std::string& tail) {
    return user_error_of([&] { read_grid(parse_yaml_document("s.yaml", std::string(kGridBase) + tail, "run spec")); });
  };
  CHECK(err("grid:\n  trainer.lr: []\n").find("s.yaml:9:15: grid.trainer.lr: expected a non-empty list") !=
        std::string::npos);
  CHECK(err("grid:\n  trainer.lr: 0.1\n").find("expected a non-empty list of values, got the value") != std::string::npos);
  CHECK(err("grid:\n  trainer.lr: [0.1, 0.1]\n").find("'0.1' is in this list twice") != std::string::npos);
  CHECK(err("grid:\n  name: [a, b]\n").find("a grid cannot vary `name`") != std::string::npos);
  CHECK(err("grid:\n  'trainer lr': [1]\n").find("'trainer lr' is not a field path") != std::string::npos);
  CHECK(err("grid:\n  trainer.lr: [1, 2]\n  exclude:\n    - {trainer.lr: 3}\n")
            .find("s.yaml:11:7: grid.exclude[0]: matches no cell") != std::string::npos);
  CHECK(err("grid:\n  trainer.lr: [1, 2]\n  exclude:\n    - {trainer.seed: 1}\n").find("is not a key of the grid") !=
        std::string::npos);
  CHECK(err("grid:\n  trainer.lr: [1]\n  exclude:\n    - {trainer.lr: 1}\n").find("every cell of the grid is excluded") !=
        std::string::npos);
  CHECK(err("grid: {trainer.lr: [1], max_parallel: 0}\n").find("grid.max_parallel: expected a whole number") !=
        std::string::npos);
  CHECK(err("grid:\n  include:\n    - {nodes: 1}\n    - {nodes: 1}\n").find("two cells are both 'nodes=1'") !=
        std::string::npos);
  CHECK(err("grid:\n  a: [1, 2]\n  b: [1, 2]\n  c: [1, 2]\n  d: [1, 2]\n  e: [1, 2]\n  f: [1, 2]\n  g: [1, 2]\n"
            "  h: [1, 2]\n  i: [1, 2]\n  j: [1, 2]\n  k: [1, 2]\n  l: [1, 2]\n  m: [1, 2]\n  n: [1, 2]\n  o: [1, 2]\n"
            "  p: [1, 2]\n  q: [1, 2]\n")
            .find("more than 100000 cells") != std::string::npos);
}

TEST_CASE("grid: placeholders take the cell's values, braces that are not ours are left alone") {
  Grid g = grid_of(std::string(kGridBase) + "grid:\n  trainer.lr: [0.1]\n  env.SEED: [7]\n");
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
  std::string text = std::string(kGridBase) +
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
  // ... and so is the one CellDocuments copies every cell from, and no two
  // cells share a node.
  const CellDocuments documents(doc);
  YamlDocument one = documents.of(g, g.cells[0]), two = documents.of(g, g.cells[1]);
  CHECK(one.root["env"]["OUT"].Scalar() == "run-lr=0.1,checkpoint_dir=/ck");
  CHECK(two.root["env"]["OUT"].Scalar() == "run-lr=0.02,checkpoint_dir=/ck");
  CHECK(one.root["trainer"]["checkpoint_dir"].Scalar() == "/ck/lr=0.1,checkpoint_dir=_ck");
  CHECK(one.root["env"]["OUT"].Mark().line + 1 == 8);
  CHECK(doc.root["grid"].IsDefined());
  CHECK(doc.root["env"]["OUT"].Scalar() == "run-{cell}");
  RunSpec spec = parse_run_spec_document(cell);
  CHECK(std::find(spec.trainer_args.begin(), spec.trainer_args.end(), "--lr=0.02") != spec.trainer_args.end());
  CHECK_FALSE(spec.has_grid);
}

TEST_CASE("grid: a value the grid puts in is its own text, a placeholder in it is not replaced") {
  std::string text = std::string(kGridBase) +
                     "env: {OUT: 'out-{A}'}\n"
                     "grid:\n  env.A: ['{lr}', '{cell}']\n  trainer.lr: [0.1]\n";
  YamlDocument doc = parse_yaml_document("s.yaml", text, "run spec");
  Grid g = *read_grid(doc);
  YamlDocument cell = cell_document("s.yaml", text, {}, g, g.cells[1]);
  CHECK(cell.root["env"]["A"].Scalar() == "{cell}");
  // The spec's own text still takes the value, as it is.
  CHECK(cell.root["env"]["OUT"].Scalar() == "out-{cell}");
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
  Grid g = grid_of(std::string(kGridBase) + "grid:\n  trainer.lr: [0.1]\n  env.batch-size: [8]\n");
  auto env = cell_environment(g, g.cells[0]);
  REQUIRE(env.size() == 3);
  CHECK(env[0] == std::pair<std::string, std::string>{"DDPCTL_CELL", "lr=0.1,batch-size=8"});
  CHECK(env[1] == std::pair<std::string, std::string>{"DDPCTL_GRID_LR", "0.1"});
  CHECK(env[2] == std::pair<std::string, std::string>{"DDPCTL_GRID_BATCH_SIZE", "8"});
}

TEST_CASE("grid: the grid's fields at the top (the old spelling) are refused, saying where they go") {
  auto err = [&](const std::string& tail) {
    return user_error_of([&] { parse_run_spec("s.yaml", std::string(kGridBase) + tail); });
  };
  std::string e = err("grid: {env.A: ['1', '2']}\ninclude:\n  - {env.A: '3'}\nmax_parallel: 2\n"
                      "exclude:\n  - {env.A: '1'}\n");
  INFO(e);
  CHECK_THAT(e, Catch::Contains("s.yaml:10:3: include: a grid's `include:` goes under `grid:` now"));
  CHECK_THAT(e, Catch::Contains("s.yaml:11:15: max_parallel: goes under `grid:` now (grid: {max_parallel: N})"));
  CHECK_THAT(e, Catch::Contains("s.yaml:13:3: exclude: expected a Slurm host list (the nodes the job must not run on, "
                                "e.g. exclude: g1,g[2-4]), got a list; a grid's cells to drop are `exclude:` under "
                                "`grid:` now"));
  // Without a grid, max_parallel: throttles nothing: refused, not ignored.
  CHECK_THAT(err("max_parallel: 2\n"), Catch::Contains("s.yaml:8:15: max_parallel: goes under `grid:` now"));
  // And under grid: without anything to vary.
  CHECK_THAT(user_error_of([&] { read_grid(parse_yaml_document("s.yaml", std::string(kGridBase) + "grid: {max_parallel: 2}\n",
                                                               "run spec")); }),
             Catch::Contains("s.yaml:8:7: grid: varies nothing"));
}

TEST_CASE("grid: a cell's variables are the grid's own and fit in what Linux passes") {
  auto err = [&](const std::string& tail) {
    return user_error_of([&] { read_grid(parse_yaml_document("s.yaml", std::string(kGridBase) + tail, "run spec")); });
  };
  // env.LR and env.lr would both be DDPCTL_GRID_LR.
  CHECK_THAT(err("grid:\n  env.LR: ['1']\n  env.lr: ['2']\n"),
             Catch::Contains("s.yaml:10:3: grid.env.lr: its variable DDPCTL_GRID_LR would also be env.LR's"));
  // Each value fits; the cell's name, DDPCTL_CELL, joining them does not.
  std::string big(70000, 'x');
  CHECK_THAT(err("grid:\n  env.A: [" + big + "]\n  env.B: [" + big + "]\n"),
             Catch::Contains("s.yaml:9:3: grid: 1 cell(s) have a name too long to pass (cell 0, 'A=xxx") &&
                 Catch::Contains("DDPCTL_CELL=<name> is 140017 bytes); Linux passes at most 128 KiB (131071 bytes)"));
  std::string huge(131060, 'y');
  CHECK_THAT(err("grid:\n  env.A: [" + huge + "]\n"),
             Catch::Contains("s.yaml:9:11: grid.env.A[0]: DDPCTL_GRID_A=<value> is 131074 bytes"));
}

TEST_CASE("grid: reading the grid leaves the spec's document as it was (every cell is copied from it)") {
  // Cells' values sorted into the keys' order, and an include: entry's value
  // replacing an earlier one's: neither writes into the document.
  YamlDocument doc = parse_yaml_document(
      "s.yaml",
      std::string(kGridBase) + "cpus_per_task: 1\ngrid:\n  trainer.lr: [0.1, 0.2]\n  include:\n    - {trainer.seed: 3}\n"
                           "    - {trainer.lr: 0.1, trainer.seed: 4}\n",
      "run spec");
  Grid g = *read_grid(doc);
  CHECK(names(g) == std::vector<std::string>{"lr=0.1,seed=4", "lr=0.2,seed=3"});
  CHECK(doc.root["grid"]["include"][0]["trainer.seed"].Scalar() == "3");
  CHECK(doc.root["grid"]["include"][1]["trainer.seed"].Scalar() == "4");
  const CellDocuments documents(doc);
  CHECK(documents.of(g, g.cells[1]).root["trainer"]["seed"].Scalar() == "3");

  doc = parse_yaml_document("s.yaml",
                            std::string(kGridBase) + "cpus_per_task: 1\ngrid:\n  include:\n"
                                                 "    - {nodes: 1, procs_per_node: 1}\n"
                                                 "    - {nodes: 1, procs_per_node: 2, cpus_per_task: 2}\n"
                                                 "    - {nodes: 2, procs_per_node: 1}\n",
                            "run spec");
  g = *read_grid(doc);
  CHECK(names(g) == std::vector<std::string>{"nodes=1,procs_per_node=1", "nodes=1,procs_per_node=2,cpus_per_task=2",
                                            "nodes=2,procs_per_node=1"});
  YAML::Node include = doc.root["grid"]["include"];
  CHECK(include[1]["nodes"].Scalar() == "1");
  CHECK(include[1]["procs_per_node"].Scalar() == "2");
  const CellDocuments shapes(doc);
  YamlDocument cell = shapes.of(g, g.cells[1]);
  CHECK(cell.root["nodes"].Scalar() == "1");
  CHECK(cell.root["procs_per_node"].Scalar() == "2");
  CHECK(cell.root["cpus_per_task"].Scalar() == "2");
  CHECK(shapes.of(g, g.cells[2]).root["cpus_per_task"].Scalar() == "1");
}
