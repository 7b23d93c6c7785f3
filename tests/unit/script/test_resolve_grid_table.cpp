// A big grid whose cells differ only in their variables is read once, as a
// table (resolve_grid.hpp): each cell's variables from the table must be what
// its own reading would give, cell for cell, and wherever a cell could
// differ otherwise the grid is read cell by cell, with the same errors.
#include <filesystem>
#include <fstream>

#include "catch.hpp"

#include "helpers.hpp"
#include "base/paths.hpp"
#include "script/resolve_grid.hpp"
#include "script/render.hpp"
#include "spec/grid_cell.hpp"

using namespace ddpctl;
using ddpctl::test::user_error_of;

namespace {

// Values that a shell or a format would take for its own, and the plain.
const char* kOddValues =
    "[\"it's\", \"a b\", \"$HOME/x\", \"%d %s\", \"\\\\\", \"\", \"$(touch pwned)\", \"{B}\", \"\\u00fcn\", \"`id`\", "
    "\"x\\\"y\"]";

// A spec of `a` x `b` cells over env.A and env.B on the local cluster, with
// `more` appended (fields, or grid: entries when it starts with two blanks).
std::string write_spec(const ddpctl::test::TempDir& dir, const std::string& a_values, int b,
                       const std::string& fields = "", const std::string& grid_more = "",
                       const std::string& command = "'echo {A} \"$B\" {cell}'") {
  std::string path = dir.path + "/s.yaml";
  std::ofstream out(path);
  out << "name: big\ncluster: " << ddpctl::test::source_dir() << "/configs/clusters/local.yaml\n"
      << "partition: cpu\nnodes: 1\ngpus_per_node: 0\nprocs_per_node: 1\ntime: '00:10:00'\noutput_dir: logs\n"
      << "command: " << command << "\n"
      << fields << "grid:\n  env.A: " << a_values << "\n  env.B: [";
  for (int i = 0; i < b; ++i) out << (i ? ", " : "") << '"' << i << '"';
  out << "]\n" << grid_more;
  return path;
}

// What plan_grid gives a cell of a grid read cell by cell.
EnvList own_variables(ResolvedRun run, const Grid& grid, const GridCell& cell, const std::string& dir) {
  for (auto& e : cell_environment(grid, cell)) run.env.push_back(e);
  run.env.emplace_back("DDPCTL_CELL_DIR", dir);
  set_checkpoint_folder(run, dir);
  return run.env;
}

}  // namespace

TEST_CASE("grid table: a big grid of env: values is one run, and each cell's variables are its own, cell for cell") {
  ddpctl::test::TempDir dir;
  std::string path = write_spec(dir, kOddValues, 91, "env: {OUT: 'out/{A}/{cell}', C: '$A-c', HOME_TOO: $HOME}\n");
  ResolvedGrid table = load_grid(path, {}, "");
  REQUIRE(table.table);
  REQUIRE(table.cells.size() == 1);
  REQUIRE(table.grid.cells.size() == 1001);
  ResolvedGrid own = load_and_resolve_grid(path, {});
  REQUIRE(own.cells.size() == 1001);
  size_t differ = 0;
  for (size_t i = 0; i < own.cells.size(); ++i) {
    const std::string folder = "/runs/big/" + own.grid.cells[i].dir_name;
    EnvList want = own_variables(own.cells[i], own.grid, own.grid.cells[i], folder);
    EnvList got = table.table->env_of(table.cells[0], table.grid, table.grid.cells[i], folder);
    if (want != got && differ++ == 0) {
      INFO("cell " << own.grid.cells[i].name);
      CHECK(want == got);
    }
  }
  CHECK(differ == 0);
  // The one script holds no cell's value: its env: is the table's line.
  ResolvedRun shared = table.cells[0];
  shared.env_table = "'cells/cell.env'";
  std::string text = render_scripts(shared, data_dir() + "/templates").at(0).text;
  CHECK(text.find("ddpctlTok") == std::string::npos);
  CHECK(text.find("eval \"$ddpctl_cell_env\"") != std::string::npos);
  CHECK(text.find("export OUT=") == std::string::npos);
}

TEST_CASE("grid table: a grid whose cells could differ otherwise is read cell by cell") {
  ddpctl::test::TempDir dir;
  // Up to kTableFromCells cells: a script each.
  CHECK_FALSE(load_grid(write_spec(dir, "[a, b, c, d, e, f, g, h, i, j]", 100), {}, "").table);
  CHECK(load_grid(write_spec(dir, "[a, b, c, d, e, f, g, h, i, j, k]", 91), {}, "").table);
  // A placeholder in a list command's word: the words are the cell's.
  CHECK_FALSE(load_grid(write_spec(dir, kOddValues, 91, "", "", "[echo, '{A}']"), {}, "").table);
  // A key that is not env.NAME.
  CHECK_FALSE(load_grid(write_spec(dir, kOddValues, 91, "", "  nodes: [1]\n"), {}, "").table);
  // An include: entry that gives one cell a key the others lack.
  CHECK_FALSE(load_grid(write_spec(dir, kOddValues, 91, "", "  include: [{env.A: a, env.Z: z}]\n"), {}, "").table);
  // Alternatives: the grid is raced.
  CHECK_FALSE(load_grid(write_spec(dir, kOddValues, 91, "alternatives: [{nodes: 2}]\n"), {}, "").table);
  // The spec holding the tokens' mark.
  CHECK_FALSE(load_grid(write_spec(dir, kOddValues, 91, "env: {X: ddpctlTok0Q}\n"), {}, "").table);
  // A --templates part that writes env: itself.
  std::string parts = dir.path + "/templates";
  std::filesystem::create_directories(parts);
  std::ofstream(parts + "/environment.sh.mustache") << "{{#env}}\nexport {{{name}}}={{{assigned}}}\n{{/env}}\n";
  std::string path = write_spec(dir, kOddValues, 91);
  CHECK(load_grid(path, {}, "").table);
  CHECK_FALSE(load_grid(path, {}, parts).table);
}

TEST_CASE("grid table: a cell's variable its own reading refuses is refused as the grid read cell by cell says") {
  ddpctl::test::TempDir dir;
  // A value put into P that holds $P: the shared run's P is fine, one cell's is not.
  std::string path = write_spec(dir, "[a, b, c, d, e, f, g, h, i, j, '$P']", 91, "env: {P: 'p{A}'}\n");
  std::string err = user_error_of([&] { load_grid(path, {}, ""); });
  CHECK(err.find("holds $P") != std::string::npos);
  CHECK(err == user_error_of([&] { load_and_resolve_grid(path, {}); }));
  // One cell's variable over Linux's 128 KiB, its value twice.
  path = write_spec(dir, "[a, b, c, d, e, f, g, h, i, j, " + std::string(70000, 'v') + "]", 91,
                    "env: {TWICE: '{A}{A}'}\n");
  err = user_error_of([&] { load_grid(path, {}, ""); });
  CHECK(err.find("env.TWICE: is 140000 bytes") != std::string::npos);
  CHECK(err == user_error_of([&] { load_and_resolve_grid(path, {}); }));
}
