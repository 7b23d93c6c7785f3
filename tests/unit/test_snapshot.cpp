// The snapshot's spec section and how the command's words are taken from it
// (snapshot.cpp); taking a snapshot with git is tested end to end
// (tests/slurm/test_snapshot_*.sh).
#include "catch.hpp"
#include <filesystem>
#include <fstream>

#include "files.hpp"
#include "helpers.hpp"
#include "snapshot.hpp"
#include "spec.hpp"

using namespace ddpctl;
using ddpctl::test::user_error_of;
namespace fs = std::filesystem;

namespace {

const char* kBase =
    "name: r\n"
    "cluster: local\n"
    "partition: cpu\n"
    "gpus_per_node: 0\n"
    "procs_per_node: 1\n"
    "time: '00:10:00'\n"
    "command: [python, train.py]\n";

void touch(const fs::path& p) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << "x\n";
}

}  // namespace

TEST_CASE("snapshot: is off, git, or a mapping of paths, excludes and a size limit") {
  using Mode = SnapshotSettings::Mode;
  CHECK(parse_run_spec("a.yaml", kBase).snapshot.mode == Mode::Auto);
  CHECK(parse_run_spec("a.yaml", std::string(kBase) + "snapshot: false\n").snapshot.mode == Mode::Off);
  CHECK(parse_run_spec("a.yaml", std::string(kBase) + "snapshot: git\n").snapshot.mode == Mode::Git);
  auto s = parse_run_spec("a.yaml", std::string(kBase) + "snapshot: {paths: [src, train.py], exclude: ['*.ckpt'], max_mb: 50}\n")
               .snapshot;
  CHECK(s.mode == Mode::Paths);
  CHECK(s.paths == std::vector<std::string>{"src", "train.py"});
  CHECK(s.exclude == std::vector<std::string>{"*.ckpt"});
  CHECK(s.max_bytes == 50LL << 20);
  auto g = parse_run_spec("a.yaml", std::string(kBase) + "snapshot: {exclude: [data], max_mb: 500}\n").snapshot;
  CHECK(g.mode == Mode::Git);
  CHECK(g.max_bytes == 500LL << 20);
}

TEST_CASE("a bad snapshot: section names the file, line and field") {
  std::string err = user_error_of(
      [] { parse_run_spec("a.yaml", std::string(kBase) + "snapshot: {paths: [/abs/src], max_mb: 0, exlude: [x]}\n"); });
  CHECK_THAT(err, Catch::Contains("a.yaml:8"));
  CHECK_THAT(err, Catch::Contains("/abs/src: must be relative to the submit folder"));
  CHECK_THAT(err, Catch::Contains("max_mb"));
  CHECK_THAT(err, Catch::Contains("exlude"));
}

TEST_CASE("the command's words that name code are taken from the snapshot, the rest stay in the submit folder") {
  ScratchDir t("ddpctl-unit");
  fs::path cwd = fs::path(t.path()) / "work", snap = fs::path(t.path()) / "snap";
  touch(cwd / "train.py");
  touch(snap / "train.py");
  touch(cwd / "conf/a.yaml");
  touch(snap / "conf/a.yaml");
  touch(cwd / "data/x.bin");  // ignored: not in the snapshot
  Snapshot s;
  s.dir = s.code_dir = snap.string();
  auto argv = snapshot_argv({"python", "train.py", "--config", "conf/a.yaml", "--data", "data", "--lr=0.1", "/abs/x",
                             "conf", "../up.py"},
                            s, cwd.string(), Location{"a.yaml", 7, 1});
  CHECK(argv == std::vector<std::string>{"python", (snap / "train.py").string(), "--config",
                                         (snap / "conf/a.yaml").string(), "--data", "data", "--lr=0.1", "/abs/x",
                                         (snap / "conf").string(), "../up.py"});
}

TEST_CASE("a folder of code that also holds files the snapshot left out is refused as ambiguous") {
  ScratchDir t("ddpctl-unit");
  fs::path cwd = fs::path(t.path()) / "work", snap = fs::path(t.path()) / "snap";
  touch(cwd / "exp/run.py");
  touch(snap / "exp/run.py");
  touch(cwd / "exp/out/ckpt.pt");  // ignored output inside the code folder
  Snapshot s;
  s.dir = s.code_dir = snap.string();
  std::string err = user_error_of([&] { snapshot_argv({"python", "-m", "x", "exp"}, s, cwd.string(), Location{"a.yaml", 7, 1}); });
  CHECK_THAT(err, Catch::Contains("a.yaml:7"));
  CHECK_THAT(err, Catch::Contains("exp is a folder of code in the snapshot"));
  CHECK_THAT(err, Catch::Contains("exp/out/ckpt.pt"));
}

