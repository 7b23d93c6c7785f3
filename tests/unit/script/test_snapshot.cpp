// The snapshot's spec section, taking a snapshot with the real git in a
// temporary folder (what take_snapshot promises) and the command's words; the
// job's working directory made of it: test_snapshot_workdir.cpp; jobs running
// it on Slurm: tests/slurm/test_snapshot_*.sh.
#include "catch.hpp"
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <cstdlib>

#include "base/files.hpp"
#include "helpers.hpp"
#include "snapshot_repo.hpp"
#include "script/snapshot.hpp"
#include "runs/snapshot_record.hpp"
#include "spec/spec.hpp"
#include "base/text.hpp"
#include "script/snapshot_workdir.hpp"

using namespace ddpctl;
using ddpctl::test::user_error_of;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> files_under(const std::string& dir) {
  std::vector<std::string> out;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it)
    if (!it->is_directory()) out.push_back(fs::relative(it->path(), dir).string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("snapshot: is off, git, or a mapping of paths, excludes and a size limit") {
  using Mode = SnapshotSettings::Mode;
  CHECK(parse_run_spec("a.yaml", test::kSnapshotBase).snapshot.mode == Mode::Auto);
  CHECK(parse_run_spec("a.yaml", std::string(test::kSnapshotBase) + "snapshot: false\n").snapshot.mode == Mode::Off);
  CHECK(parse_run_spec("a.yaml", std::string(test::kSnapshotBase) + "snapshot: git\n").snapshot.mode == Mode::Git);
  auto s = parse_run_spec("a.yaml", std::string(test::kSnapshotBase) + "snapshot: {paths: [src, train.py], exclude: ['*.ckpt'], max_mb: 50}\n")
               .snapshot;
  CHECK(s.mode == Mode::Paths);
  CHECK(s.paths == std::vector<std::string>{"src", "train.py"});
  CHECK(s.exclude == std::vector<std::string>{"*.ckpt"});
  CHECK(s.max_bytes == 50LL << 20);
  auto g = parse_run_spec("a.yaml", std::string(test::kSnapshotBase) + "snapshot: {exclude: [data], max_mb: 500}\n").snapshot;
  CHECK(g.mode == Mode::Git);
  CHECK(g.max_bytes == 500LL << 20);
}

TEST_CASE("a bad snapshot: section names the file, line and field") {
  std::string err = user_error_of(
      [] { parse_run_spec("a.yaml", std::string(test::kSnapshotBase) + "snapshot: {paths: [/abs/src], max_mb: 0, exlude: [x]}\n"); });
  CHECK_THAT(err, Catch::Contains("a.yaml:8"));
  CHECK_THAT(err, Catch::Contains("/abs/src: must be relative to the submit folder"));
  CHECK_THAT(err, Catch::Contains("max_mb"));
  CHECK_THAT(err, Catch::Contains("exlude"));
}

TEST_CASE("the command's words that name code are taken from the snapshot, the rest stay in the submit folder") {
  ScratchDir t("ddpctl-unit");
  fs::path cwd = fs::path(t.path()) / "work", snap = fs::path(t.path()) / "snap";
  test::touch(cwd / "train.py");
  test::touch(snap / "train.py");
  test::touch(cwd / "conf/a.yaml");
  test::touch(snap / "conf/a.yaml");
  test::touch(cwd / "data/x.bin");  // ignored: not in the snapshot
  Snapshot s;
  s.dir = s.code_dir = snap.string();
  auto argv = snapshot_argv({"python", "train.py", "--config", "conf/a.yaml", "--data", "data", "--lr=0.1", "/abs/x",
                             "conf", "../up.py"},
                            s, cwd.string());
  CHECK(argv == std::vector<std::string>{"python", (snap / "train.py").string(), "--config",
                                         (snap / "conf/a.yaml").string(), "--data", "data", "--lr=0.1", "/abs/x",
                                         (snap / "conf").string(), "../up.py"});
}

TEST_CASE("a folder of code that also holds files the snapshot left out stays relative: the working directory has both") {
  ScratchDir t("ddpctl-unit");
  fs::path cwd = fs::path(t.path()) / "work", snap = fs::path(t.path()) / "snap";
  test::touch(cwd / "exp/run.py");
  test::touch(snap / "exp/run.py");
  test::touch(cwd / "exp/out/ckpt.pt");  // ignored output inside the code folder
  Snapshot s;
  s.dir = s.code_dir = snap.string();
  CHECK(snapshot_argv({"python", "exp/run.py", "exp"}, s, cwd.string()) ==
        std::vector<std::string>{"python", (snap / "exp/run.py").string(), "exp"});
}

TEST_CASE("take_snapshot: a git work tree as it is on disk, never what git ignores, the logs or the runs folder") {
  test::SnapshotRepo r;
  r.runs = r.top + "/runs";  // the default: inside the submit folder
  r.sh("git init -q -b main . && printf 'data/\\n*.ckpt\\n' >.gitignore && echo v1 >prog.txt && echo same >same.txt && "
       "mkdir src && echo 'import os' >src/m.py && git add -A && git commit -qm one && "
       "echo v2 >prog.txt && echo new >untracked.txt && mkdir -p data logs runs/old && echo big >data/big.bin && "
       "echo w >model.ckpt && echo log >logs/a.out && echo r >runs/old/x");
  std::string head = r.out("git rev-parse HEAD");
  SnapshotDecision d = r.take();
  REQUIRE(d.snapshot);
  const Snapshot& s = *d.snapshot;
  CHECK(s.mode == "git");
  CHECK(s.dir == r.runs + "/.snapshots/" + s.id);
  CHECK(s.code_dir == s.dir);
  CHECK(s.live_dir == r.top);
  CHECK(s.prefix().empty());
  // Tracked (as modified on disk), and new files git does not ignore; not
  // data/, *.ckpt, the logs (output_dir) or the runs folder.
  CHECK(files_under(s.dir) == std::vector<std::string>{".gitignore", "prog.txt", "same.txt", "src/m.py", "untracked.txt"});
  CHECK(test::text_of(s.dir + "/prog.txt") == "v2\n");
  CHECK(s.files == 5);
  CHECK(s.bytes == static_cast<long long>(std::string("data/\n*.ckpt\nv2\nsame\nimport os\nnew\n").size()));
  CHECK(s.commit == head);
  CHECK(s.branch == "main");
  CHECK(s.dirty);
  CHECK_THAT(s.diff, Catch::Contains("-v1") && Catch::Contains("+v2") && Catch::Contains("+new"));
  CHECK_FALSE(s.reused);
  // Shared by every run of this code: nobody writes into it.
  CHECK((fs::status(s.dir + "/prog.txt").permissions() & fs::perms::owner_write) == fs::perms::none);
  // The id is the tree git itself computes for those files.
  r.sh("git add -A -- . ':!logs' ':!runs' && git commit -qm two");
  CHECK(r.out("git rev-parse HEAD^{tree}") == s.id);
  // The repository's own index and HEAD were untouched by the snapshot (the commit above is the test's).
  CHECK(r.out("git rev-parse HEAD~1") == head);

  // The same state again: the store already has it.
  SnapshotDecision again = r.take();
  REQUIRE(again.snapshot);
  CHECK(again.snapshot->id == s.id);
  CHECK(again.snapshot->reused);
  CHECK_FALSE(again.snapshot->dirty);  // committed now
  CHECK(again.snapshot->diff.empty());
}

TEST_CASE("take_snapshot: a file changed in the second its commit was made is taken as it is on disk") {
  // git trusts its index's stat cache (same size, same mtime) unless the
  // file is as new as the index itself ("racily clean"): the scratch index
  // must keep the repository index's time, or this edit would be missed.
  test::SnapshotRepo r;
  r.runs = r.top + "/runs";
  // Made deterministic: one second for the file and the index, and ctime
  // (which no tool can set) left out of git's comparison.
  r.sh("git init -q -b main . && git config core.trustctime false && echo v1 >prog.txt && "
       "touch -d @1700000000 prog.txt && git add -A && git commit -qm one && echo v2 >prog.txt && "
       "touch -d @1700000000 prog.txt .git/index");
  SnapshotDecision d = r.take();
  REQUIRE(d.snapshot);
  CHECK(test::text_of(d.snapshot->dir + "/prog.txt") == "v2\n");
  CHECK(d.snapshot->dirty);
}

TEST_CASE("take_snapshot: from a subfolder of the work tree, the whole tree is copied and the code is the subfolder") {
  test::SnapshotRepo r;
  r.sh("git init -q -b main . && mkdir -p exp lib && echo e >exp/run.sh && echo l >lib/util.sh && "
       "git add -A && git commit -qm one");
  SnapshotDecision d = r.take("", r.top + "/exp");
  REQUIRE(d.snapshot);
  CHECK(d.snapshot->code_dir == d.snapshot->dir + "/exp");
  CHECK(d.snapshot->prefix() == "exp");
  CHECK(d.snapshot->live_dir == r.top);
  CHECK(files_under(d.snapshot->dir) == std::vector<std::string>{"exp/run.sh", "lib/util.sh"});
  // Counted (and held to max_mb) whole, not the subfolder alone.
  CHECK(d.snapshot->files == 2);
  CHECK_FALSE(d.snapshot->dirty);
}

TEST_CASE("take_snapshot: a repository without a commit, and exclude patterns") {
  test::SnapshotRepo r;
  r.sh("git init -q . && echo a >a.txt && mkdir big && echo b >big/b.bin");
  SnapshotDecision d = r.take("snapshot: {exclude: [big]}\n");
  REQUIRE(d.snapshot);
  CHECK(files_under(d.snapshot->dir) == std::vector<std::string>{"a.txt"});
  CHECK(d.snapshot->commit.empty());
  CHECK(d.snapshot->dirty);  // nothing says what these files are
}

TEST_CASE("take_snapshot: from a folder .gitignore ignores (the demo's demo/), and excluding an ignored path") {
  // git add refuses an exclusion naming an ignored path: the logs and runs
  // folders inside an ignored submit folder are such paths (scripts/demo
  // failed so), and so is a snapshot.exclude entry that .gitignore names.
  test::SnapshotRepo r;
  r.sh("git init -q -b main . && printf 'demo/\\nbig/\\n' >.gitignore && echo p >prog.py && mkdir -p demo big && "
       "echo d >demo/data.txt && echo b >big/b.bin && git add -A && git commit -qm one");
  r.runs = r.top + "/demo/runs";
  r.logs = r.top + "/demo/logs";
  SnapshotDecision d = r.take("snapshot: {exclude: [big, 'demo/*.txt']}\n", r.top + "/demo");
  REQUIRE(d.snapshot);
  CHECK(files_under(d.snapshot->dir) == std::vector<std::string>{".gitignore", "prog.py"});
  CHECK(d.snapshot->files == 2);
  CHECK(d.snapshot->code_dir == d.snapshot->dir + "/demo");
  CHECK_FALSE(d.snapshot->dirty);
  // The job works in a folder of its view, not in a link to the live demo/
  // (the job refused to start there), and finds demo/'s files through it.
  std::string run_dir = r.runs + "/run-1";
  fs::create_directories(run_dir);
  record_snapshot(run_dir, d);
  CHECK(job_workdir(run_dir) == run_dir + "/workdir/demo");
  CHECK(fs::is_directory(fs::symlink_status(run_dir + "/workdir/demo")));
  CHECK(fs::read_symlink(run_dir + "/workdir/demo/data.txt") == r.top + "/demo/data.txt");
  CHECK(fs::read_symlink(run_dir + "/workdir/demo/runs") == r.top + "/demo/runs");
  CHECK(test::text_of(run_dir + "/workdir/demo/../prog.py") == "p\n");
}

TEST_CASE("take_snapshot: none outside git, for a shell line, or when turned off, an explicit one that cannot be taken is an error") {
  test::SnapshotRepo r;  // not a git work tree: git looks no further up than the temporary folder
  struct Ceiling {
    explicit Ceiling(const std::string& dir) { setenv("GIT_CEILING_DIRECTORIES", dir.c_str(), 1); }
    ~Ceiling() { unsetenv("GIT_CEILING_DIRECTORIES"); }
  } ceiling(r.tmp.path());
  test::touch(r.top + "/prog.txt");
  SnapshotDecision d = r.take();
  CHECK_FALSE(d.snapshot);
  CHECK(d.off_reason == "not a git work tree (snapshot: {paths: [...]} snapshots one)");
  std::string err = user_error_of([&] { r.take("snapshot: git\n"); });
  CHECK_THAT(err, Catch::Contains("a.yaml:9") && Catch::Contains("is not in a git work tree"));
  CHECK(r.take("", "", true).off_reason == "--no-snapshot");
  CHECK(r.take("snapshot: false\n").off_reason == "snapshot: false");

  r.sh("git init -q . && git add -A && git commit -qm one");
  auto shell = [&](const std::string& extra) {
    std::string text = std::string(test::kSnapshotBase);
    text.replace(text.find("command: [python, train.py]"), std::string("command: [python, train.py]").size(),
                 "command: python train.py");
    return take_snapshot(parse_run_spec("a.yaml", text + extra), r.top, r.runs, false, r.runner);
  };
  CHECK(shell("").off_reason == "command: is a shell line (write it as a list to snapshot the code)");
  CHECK_THAT(user_error_of([&] { shell("snapshot: git\n"); }), Catch::Contains("needs command: as a list"));
}

TEST_CASE("take_snapshot: one over snapshot.max_mb stops the submit, naming its largest files") {
  test::SnapshotRepo r;
  r.sh("git init -q . && head -c 2097152 /dev/zero >weights.bin && echo x >small.txt");
  std::string err = user_error_of([&] { r.take("snapshot: {max_mb: 1}\n"); });
  CHECK_THAT(err, Catch::Contains("a.yaml:9") && Catch::Contains("the snapshot would be 2.0 MiB in 2 files") &&
                      Catch::Contains("weights.bin") && Catch::Contains("snapshot.max_mb"));
  CHECK_FALSE(fs::exists(r.runs + "/.snapshots"));  // nothing was copied
}

TEST_CASE("take_snapshot: snapshot.paths copies exactly the listed files, git or not, ignored ones too") {
  test::SnapshotRepo r;
  test::touch(r.top + "/train.py");
  test::touch(r.top + "/lib/a.py");
  test::touch(r.top + "/lib/a.pyc");
  test::touch(r.top + "/data/x.bin");
  SnapshotDecision d = r.take("snapshot: {paths: [train.py, lib], exclude: ['*.pyc']}\n");
  REQUIRE(d.snapshot);
  CHECK(d.snapshot->mode == "paths");
  CHECK(d.snapshot->live_dir == r.top);
  CHECK(files_under(d.snapshot->dir) == std::vector<std::string>{"lib/a.py", "train.py"});
  CHECK(d.snapshot->commit.empty());
  std::string err = user_error_of([&] { r.take("snapshot: {paths: [nope.py]}\n"); });
  CHECK_THAT(err, Catch::Contains("snapshot.paths") && Catch::Contains("nope.py does not exist"));
}
