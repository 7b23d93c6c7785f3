// A grid value reaches the cell's program as exactly one word, whatever it
// holds, in every place a placeholder may stand: the scripts `gen` renders
// are run (their exports and launch command) and what the program gets is
// compared byte for byte.
#include <filesystem>
#include <fstream>
#include <map>

#include "catch.hpp"

#include "spec/grid.hpp"
#include "spec/grid_read.hpp"
#include "spec/grid_cell.hpp"
#include "helpers.hpp"
#include "script/resolve.hpp"
#include "script/resolve_grid.hpp"
#include "base/shell.hpp"
#include "sweep/grid_scripts.hpp"
#include "base/text.hpp"

using namespace ddpctl;
using ddpctl::test::user_error_of;
namespace fs = std::filesystem;

namespace {

// Values a shell would run, split, glob or expand, each a cell.
const std::vector<std::string> kHostile = {
    "$(touch M)", "a b", "it's", "*", "\\", "", "\"", "`touch B`", "$HOME", "$DDPCTL_CELL", "{cell}", "-n", "%s",
    "a'b\"c $x", "${DDPCTL_GRID_V}", "  two  spaces "};

// A YAML double-quoted scalar of `s`.
std::string yaml_quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string hostile_list() {
  std::vector<std::string> items;
  for (const auto& v : kHostile) items.push_back(yaml_quoted(v));
  return "[" + join(items, ", ") + "]";
}

std::string write_spec(const test::TempDir& dir, const std::string& body) {
  std::string path = dir.path + "/s.yaml";
  std::ofstream(path) << "name: g\ncluster: " << test::source_dir() << "/configs/clusters/local.yaml\n"
                      << "partition: cpu\ngpus_per_node: 0\nprocs_per_node: 1\ntime: '00:10:00'\noutput_dir: logs\n"
                      << body;
  return path;
}

// The cells' scripts as `gen` renders them, by cell index.
std::vector<std::string> cell_scripts(const std::string& spec, const std::string& dir) {
  std::map<int, std::string> by_index;
  for (const auto& [file, text] : render_grid_scripts(spec, {}, dir + "/gen", test::source_dir() + "/templates"))
    if (file.rfind("cells/", 0) == 0) by_index[std::stoi(file.substr(6))] = text;
  std::vector<std::string> out;
  for (auto& [i, text] : by_index) out.push_back(text);
  return out;
}

// What one rank of a cell's script runs: the script's exports of the cell's
// variables and env:, then its launch command as the script has it (the
// line after `ddpctl-task \`), run by bash in `dir`; the words the program
// printed NUL-terminated.
std::vector<std::string> run_cell(const std::string& script, const std::string& dir) {
  std::string exports;
  for (const auto& line : split(script, '\n'))
    if (line.rfind("export DDPCTL_", 0) == 0 || line.rfind("export OUT=", 0) == 0) exports += line + "\n";
  const std::string mark = "ddpctl-task \\\n";
  size_t at = script.find(mark);
  REQUIRE(at != std::string::npos);
  at += mark.size();
  std::string launch = trim(script.substr(at, script.find('\n', at) - at));
  REQUIRE(launch.size() > 2);
  REQUIRE(launch.substr(launch.size() - 2) == " &");
  launch.resize(launch.size() - 2);
  std::string out = test::run_bash("cd " + shell_quote(dir) + " || exit 1\n" + exports + launch);
  std::vector<std::string> words;
  for (size_t start = 0; start < out.size();) {
    size_t nul = out.find('\0', start);
    if (nul == std::string::npos) nul = out.size();
    words.push_back(out.substr(start, nul - start));
    start = nul + 1;
  }
  return words;
}

}  // namespace

TEST_CASE("grid_cell: a hostile value is one exact word in a list command's words and in the cell's variables") {
  test::TempDir dir;
  std::string spec = write_spec(dir, "command: [printf, '%s\\0', '{V}', 'v={V}', '{cell}', '{env.V}']\n"
                                     "grid:\n  env.V: " + hostile_list() + "\n");
  std::vector<std::string> scripts = cell_scripts(spec, dir.path);
  REQUIRE(scripts.size() == kHostile.size());
  fs::create_directory(dir.path + "/run");
  for (size_t i = 0; i < kHostile.size(); ++i) {
    const std::string& v = kHostile[i];
    INFO("value " << printable(v));
    CHECK(run_cell(scripts[i], dir.path + "/run") == std::vector<std::string>{v, "v=" + v, "V=" + v, v});
  }
  CHECK_FALSE(fs::exists(dir.path + "/run/M"));
  CHECK_FALSE(fs::exists(dir.path + "/run/B"));
}

TEST_CASE("grid_cell: a hostile value is one exact word wherever it stands in a shell line, never parsed") {
  test::TempDir dir;
  // Outside quotes, in "...", in '...', in $'...', inside "$( )", and the
  // variables: env: (OUT), DDPCTL_CELL, DDPCTL_GRID_V.
  std::string spec = write_spec(
      dir, "env: {OUT: 'o={V}'}\n"
           "command: 'printf ''%s\\0'' {V} v={V} \"d={V}\" ''s={V}'' $''a={V}'' \"$(printf %s {V})\" \"$OUT\" "
           "\"$DDPCTL_CELL\" {cell} \"$DDPCTL_GRID_V\" x{{V}}y # {V} it''s a comment'\n"
           "grid:\n  env.V: " + hostile_list() + "\n");
  std::vector<std::string> scripts = cell_scripts(spec, dir.path);
  REQUIRE(scripts.size() == kHostile.size());
  fs::create_directory(dir.path + "/run");
  for (size_t i = 0; i < kHostile.size(); ++i) {
    const std::string& v = kHostile[i];
    INFO("value " << printable(v) << "\nscript's command: " << scripts[i].substr(scripts[i].find("ddpctl-task"), 400));
    CHECK(run_cell(scripts[i], dir.path + "/run") ==
          std::vector<std::string>{v, "v=" + v, "d=" + v, "s=" + v, "a=" + v, v, "o=" + v, "V=" + v, "V=" + v, v,
                                   "x{V}y"});
  }
  CHECK_FALSE(fs::exists(dir.path + "/run/M"));
  CHECK_FALSE(fs::exists(dir.path + "/run/B"));
}

TEST_CASE("grid_cell: a hostile value is one exact word in the trainer's extra_args and checkpoint folder") {
  test::TempDir dir;
  std::string stub = dir.path + "/trainer.sh";
  std::ofstream(stub) << "#!/bin/bash\nprintf '%s\\0' \"$@\"\n";
  fs::permissions(stub, fs::perms::owner_all);
  std::string spec = write_spec(dir, "trainer:\n  program: " + stub +
                                         "\n  model: smallcnn\n  data: synthetic\n  epochs: 1\n"
                                         "  checkpoint_dir: 'ck/{V}'\n  extra_args: ['--x={V}', '{V}']\n"
                                         "grid:\n  env.V: " + hostile_list() + "\n");
  std::vector<std::string> scripts = cell_scripts(spec, dir.path);
  REQUIRE(scripts.size() == kHostile.size());
  fs::create_directory(dir.path + "/run");
  for (size_t i = 0; i < kHostile.size(); ++i) {
    const std::string& v = kHostile[i];
    INFO("value " << printable(v));
    std::vector<std::string> words = run_cell(scripts[i], dir.path + "/run");
    REQUIRE(words.size() >= 3);
    CHECK(std::vector<std::string>(words.end() - 2, words.end()) == std::vector<std::string>{"--x=" + v, v});
    CHECK(std::count(words.begin(), words.end(), "--checkpoint-dir=ck/" + v) == 1);
  }
  CHECK_FALSE(fs::exists(dir.path + "/run/M"));
}

TEST_CASE("grid_cell: what cannot reach the program as it is, is refused at its line") {
  test::TempDir dir;
  // A newline: no value that reaches a script holds one.
  std::string err = user_error_of([&] {
    load_and_resolve_grid(write_spec(dir, "command: 'echo {V}'\ngrid:\n  env.V: [ok, \"a\\nb\"]\n"), {});
  });
  CHECK_THAT(err, Catch::Contains("s.yaml:10:15: grid.env.V[1]: a grid value contains a newline"));
  // $OUT put into env.OUT: env: reads it as OUT's earlier value.
  err = user_error_of([&] {
    load_and_resolve_grid(write_spec(dir, "env: {OUT: 'o={V}'}\ncommand: 'true'\ngrid:\n  env.V: ['$OUT', b]\n"), {});
  });
  CHECK_THAT(err, Catch::Contains("s.yaml:8:12: env.OUT: the cell's value '$OUT' holds $OUT, which env: reads as "
                                  "OUT's earlier value") &&
                      Catch::Contains("(cell V=$OUT)"));
  // Inside ${...} no form of the value is exact: the variable is the way.
  err = user_error_of([&] {
    load_and_resolve_grid(write_spec(dir, "command: 'echo ${X:-{V}}'\ngrid:\n  env.V: [a]\n"), {});
  });
  CHECK_THAT(err, Catch::Contains("s.yaml:8:10: command: {V} stands inside ${...}") &&
                      Catch::Contains("write $DDPCTL_GRID_V there"));
}

TEST_CASE("grid_cell: the cell's own variables keep a $ in its values as it is") {
  test::TempDir dir;
  std::string spec = write_spec(dir, "command: 'true'\ngrid:\n  env.V: ['$DDPCTL_CELL', '${DDPCTL_GRID_V}x']\n");
  std::vector<std::string> scripts = cell_scripts(spec, dir.path);
  REQUIRE(scripts.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    std::string exports;
    for (const auto& line : split(scripts[i], '\n'))
      if (line.rfind("export DDPCTL_CELL=", 0) == 0 || line.rfind("export DDPCTL_GRID_V=", 0) == 0)
        exports += line + "\n";
    std::string v = i == 0 ? "$DDPCTL_CELL" : "${DDPCTL_GRID_V}x";
    CHECK(test::run_bash(exports + "printf '%s|%s' \"$DDPCTL_CELL\" \"$DDPCTL_GRID_V\"") == "V=" + v + "|" + v);
  }
}
