// The race's protocol on disk from the job script's end
// (templates/race.sh.mustache): it spells no file of the race itself, every
// name comes from the table (race_contract.hpp) through render.cpp, and a
// script across sites names them all (the readers' end:
// tests/unit/runs/test_race_contract.cpp).
#include "catch.hpp"

#include <regex>
#include <sstream>

#include "base/files.hpp"
#include "helpers.hpp"
#include "runs/race_contract.hpp"
#include "script/render.hpp"
#include "script/resolve.hpp"
#include "spec/cluster.hpp"
#include "spec/spec.hpp"

using namespace ddpctl;

TEST_CASE("race.sh spells no name of the race's files: each is a variable from the table") {
  std::istringstream in(read_file(test::source_dir() + "/templates/race.sh.mustache"));
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    const size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos || line[first] == '#' || line.compare(first, 3, "{{!") == 0) continue;
    for (RaceFile f : race_files_in_table()) {
      // A path's part: after a slash (or a quote ending one) and before a
      // quote, a slash, a dot's number, a `$` or a space.
      const std::string name = race_file_name(f);
      for (size_t at = line.find("/" + name); at != std::string::npos; at = line.find("/" + name, at + 1)) {
        const char after = at + 1 + name.size() < line.size() ? line[at + 1 + name.size()] : ' ';
        const bool word_end = name.back() == '.' || std::string("\"/ $*.").find(after) != std::string::npos;
        INFO("templates/race.sh.mustache:" << n << ": " << line);
        CHECK_FALSE(word_end);
      }
    }
  }
}

TEST_CASE("a script across sites names every file of its gate and claim from the table") {
  const std::string root = test::source_dir();
  RunSpec spec = parse_run_spec("s.yaml",
                                "name: r\ncluster: local\npartition: cpu\ngpus_per_node: 0\nprocs_per_node: 1\n"
                                "command: [hostname]\non: u@a.org\nrequeue: {max_restarts: 1}\n"
                                "alternatives:\n  - {on: u@b.org, nodes: 2}\n",
                                {}, "u@a.org");
  ResolvedRun run = resolve_run(spec, load_cluster_profile(root + "/configs/clusters/local.yaml"));
  RaceRole race;
  race.dir = "/runs/r-1/race";
  race.reraces = true;
  race.across.site = "u@a.org";
  race.across.coordinator = "race-1";
  race.across.gate_s = 60;
  auto scripts = render_scripts(run, root + "/templates", race);
  REQUIRE(scripts.size() == 1);
  const std::string& text = scripts[0].text;
  for (RaceFile f : race_files_in_table()) {
    if (f == RaceFile::Ranking || f == RaceFile::Opened) continue;  // ddpctl's own, never the job's
    INFO(race_file_name(f));
    CHECK(text.find(race_file_name(f)) != std::string::npos);
  }
  CHECK(text.find("ddpctl_gate=$ddpctl_race/gate\n") != std::string::npos);
  CHECK(text.find("\"$ddpctl_here/at.$SLURM_JOB_ID.tmp\"") != std::string::npos);
}
