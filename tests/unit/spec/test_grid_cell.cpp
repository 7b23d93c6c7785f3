// A grid cell's placeholders and variables (grid_cell.hpp), read from the
// grid alone; the cells' scripts gen renders, run with hostile values, are
// tested in tests/unit/workflows/test_grid_scripts.cpp.
#include "catch.hpp"

#include "base/yaml_document.hpp"
#include "spec/grid.hpp"
#include "spec/grid_cell.hpp"
#include "spec/grid_read.hpp"

using namespace ddpctl;

TEST_CASE("grid_cell: placeholders of keys with - or an index are read and {cell} is always the cell's name") {
  YamlDocument doc = parse_yaml_document(
      "s.yaml", "grid:\n  env.batch-size: [8]\n  trainer.extra_args[1]: [x]\n  env.cell: [c]\n", "run spec");
  Grid g = *read_grid(doc);
  const GridCell& c = g.cells.at(0);
  CHECK(c.name == "batch-size=8,trainer.extra_args[1]=x,env.cell=c");
  std::string problem;
  CHECK(replace_placeholders("{batch-size}/{trainer.extra_args[1]}/{env.cell}/{cell}", g, c, &problem) ==
        "8/x/c/" + c.name);
  CHECK(problem.empty());
  CHECK_FALSE(replace_placeholders("--bs={batch-sise}", g, c, &problem));
  CHECK_THAT(problem, Catch::Contains("{batch-sise} names no key of the grid (did you mean 'batch-size'?)"));
  auto env = cell_environment(g, c);
  REQUIRE(env.size() == 4);
  CHECK(env[3] == std::pair<std::string, std::string>{"DDPCTL_GRID_ENV_CELL", "c"});
}
