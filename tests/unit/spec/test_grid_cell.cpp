// A grid cell's placeholders and variables (grid_cell.hpp), read from the
// grid alone; the cells' scripts gen renders, run with hostile values, are
// tested in tests/unit/sweep/test_grid_scripts.cpp.
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

TEST_CASE("grid_cell: a placeholder where bash evaluates arithmetic takes plain numbers only") {
  YamlDocument doc = parse_yaml_document(
      "s.yaml", "grid:\n  env.X: [\"a[$(touch M)]\", \"3\"]\n", "run spec");
  Grid g = *read_grid(doc);
  REQUIRE(g.cells.size() == 2);
  for (const char* line : {"[[ {X} -gt 0 ]]", "echo $(( {X} + 1 ))", "(( {X} ))", "let y={X}", "declare -i n={X}",
                           "a[{X}]=1", "echo \"$(( {X} ))\""}) {
    INFO(line);
    std::string problem;
    CHECK_FALSE(replace_placeholders(line, g, g.cells[0], &problem, PlaceholderUse::ShellLine));
    CHECK_THAT(problem, Catch::Contains("{X} stands where bash evaluates arithmetic") &&
                            Catch::Contains("cell X=a[$(touch M)] gives it 'a[$(touch M)]'"));
    problem.clear();
    CHECK(replace_placeholders(line, g, g.cells[1], &problem, PlaceholderUse::ShellLine));
    CHECK(problem.empty());
  }
  // {cell} is a name (X=3): never a number.
  std::string problem;
  CHECK_FALSE(replace_placeholders("(( {cell} ))", g, g.cells[1], &problem, PlaceholderUse::ShellLine));
  // Elsewhere any value is one word, as before.
  problem.clear();
  CHECK(replace_placeholders("echo {X}", g, g.cells[0], &problem, PlaceholderUse::ShellLine) == "echo \"${DDPCTL_GRID_X-}\"");
}

TEST_CASE("grid_read: a value of env.NAME that holds $NAME is refused at its line, as env: would read it") {
  YamlDocument doc = parse_yaml_document("s.yaml", "grid:\n  env.A: [\"x$A\", \"y${A}z\", \"$AB\"]\n", "run spec");
  Diagnostics diags;
  try {
    read_grid(doc);
    FAIL("no error");
  } catch (const UserError& e) {
    std::string said = e.what();
    CHECK_THAT(said, Catch::Contains("s.yaml:2:11: grid.env.A[0]: the value 'x$A' holds $A"));
    CHECK_THAT(said, Catch::Contains("grid.env.A[1]: the value 'y${A}z' holds $A"));
    CHECK_THAT(said, !Catch::Contains("grid.env.A[2]"));  // $AB is another variable
  }
}
