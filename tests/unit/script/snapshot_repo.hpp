#pragma once
// A git work tree made with the real git, and a runs folder beside it, as the
// snapshot tests build it (test_snapshot.cpp, test_snapshot_workdir.cpp).
#include <filesystem>
#include <fstream>
#include <string>

#include "base/files.hpp"
#include "base/process.hpp"
#include "base/text.hpp"
#include "helpers.hpp"
#include "script/snapshot.hpp"
#include "spec/spec.hpp"

namespace ddpctl::test {

namespace fs = std::filesystem;

inline const char* const kSnapshotBase =
    "name: r\n"
    "cluster: local\n"
    "partition: cpu\n"
    "gpus_per_node: 0\n"
    "procs_per_node: 1\n"
    "time: '00:10:00'\n"
    "command: [python, train.py]\n";

inline void touch(const fs::path& p, const std::string& text = "x\n") {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

inline std::string text_of(const fs::path& p) { return read_file(p.string()); }

// A folder made with the real git (and a runs folder beside it): `sh` runs a
// bash script in `top`, with an identity for commits.
struct SnapshotRepo {
  ScratchDir tmp{"ddpctl-unit"};
  std::string top = tmp.path() + "/repo";
  std::string runs = tmp.path() + "/runs";
  std::string logs = top + "/logs";
  SystemCommandRunner runner;
  SnapshotRepo() { fs::create_directories(top); }
  void sh(const std::string& script) const {
    test::run_bash("set -e; cd \"$1\"; export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org "
                   "GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org GIT_CONFIG_NOSYSTEM=1 HOME=\"$1\"; " + script,
                   {top});
  }
  std::string out(const std::string& script) const {
    return trim(test::run_bash("set -e; cd \"$1\"; " + script, {top}));
  }
  // A spec whose logs are the tree's logs/, with `extra` YAML.
  RunSpec spec(const std::string& extra = "") const {
    return parse_run_spec("a.yaml", std::string(kSnapshotBase) + "output_dir: " + logs + "\n" + extra);
  }
  SnapshotDecision take(const std::string& extra = "", const std::string& cwd = "", bool no_snapshot = false) {
    return take_snapshot(spec(extra), cwd.empty() ? top : cwd, runs, no_snapshot, runner);
  }
};

}  // namespace ddpctl::test
