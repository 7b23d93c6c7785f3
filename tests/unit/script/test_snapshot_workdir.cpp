// The job's working directory made of a snapshot (make_workdir): the
// snapshot's files, what it left out linked to the live folder, from a
// subfolder, or none at all; and what a snapshot changes in the run: its
// folders named absolute, its script, the container's binds.
#include "catch.hpp"
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "spec/cluster.hpp"
#include "script/container.hpp"
#include "script/container_script.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "snapshot_repo.hpp"
#include "script/render.hpp"
#include "script/resolve.hpp"
#include "script/snapshot.hpp"
#include "runs/snapshot_record.hpp"
#include "spec/spec.hpp"
#include "script/snapshot_workdir.hpp"

using namespace ddpctl;
using ddpctl::test::user_error_of;
namespace fs = std::filesystem;

TEST_CASE("the job's working directory: the snapshot's files from the snapshot, what it left out linked to the live folder") {
  test::SnapshotRepo r;
  r.sh("git init -q -b main . && printf 'data/big*\\nout/\\n' >.gitignore && echo v1 >prog.txt && "
       "mkdir -p data src/pkg && echo 'how to get the data' >data/README && echo m >src/pkg/m.py && "
       "ln -s prog.txt latest && git add -A && git commit -qm v1 && "
       "echo big >data/big.bin && mkdir out && echo old >out/a.txt && mkdir logs");
  SnapshotDecision d = r.take();
  REQUIRE(d.snapshot);
  std::string run_dir = r.runs + "/run-1";
  fs::create_directories(run_dir);
  record_snapshot(run_dir, d);
  std::string w = run_dir + "/workdir";
  CHECK(job_workdir(run_dir) == w);
  auto j = nlohmann::json::parse(read_file(run_dir + "/snapshot.json"));
  CHECK(j["workdir"] == w);
  CHECK(j["live_dir"] == r.top);

  // The tree moves on: the view still reads the snapshot's files, by any path.
  r.sh("echo v2 >prog.txt && echo 'v2 readme' >data/README && git commit -qam v2 && echo late >late.txt");
  CHECK(test::text_of(w + "/prog.txt") == "v1\n");
  CHECK(test::text_of(w + "/latest") == "v1\n");  // the tracked link, copied: it resolves in the view
  CHECK(fs::is_symlink(w + "/latest"));
  CHECK(test::text_of(w + "/src/pkg/m.py") == "m\n");
  // A file of the snapshot is the snapshot's file (a hard link: one directory entry, no copy).
  struct stat a {}, b {};
  REQUIRE(stat((w + "/prog.txt").c_str(), &a) == 0);
  REQUIRE(stat((d.snapshot->dir + "/prog.txt").c_str(), &b) == 0);
  CHECK((a.st_ino == b.st_ino || fs::read_symlink(w + "/prog.txt") == d.snapshot->dir + "/prog.txt"));
  // A folder holding both: a folder of the view, its tracked README the
  // snapshot's, its ignored files linked to the live ones.
  CHECK_FALSE(fs::is_symlink(w + "/data"));
  CHECK(test::text_of(w + "/data/README") == "how to get the data\n");
  CHECK(fs::read_symlink(w + "/data/big.bin") == r.top + "/data/big.bin");
  // Ignored folders, the logs folder: links to the live ones, so what the job writes there is found there.
  CHECK(fs::read_symlink(w + "/out") == r.top + "/out");
  CHECK(fs::read_symlink(w + "/logs") == r.top + "/logs");
  test::touch(w + "/out/b.txt", "written by the job\n");
  CHECK(test::text_of(r.top + "/out/b.txt") == "written by the job\n");
  // A new file beside the code stays in the view (the run's folder), never in the live folder or the snapshot.
  test::touch(w + "/results.txt");
  CHECK_FALSE(fs::exists(r.top + "/results.txt"));
  CHECK_FALSE(fs::exists(d.snapshot->dir + "/results.txt"));
  // Made after the view: not in it (the job links it in as each attempt starts: snapshot.sh).
  CHECK_FALSE(fs::exists(fs::symlink_status(w + "/late.txt")));
  // git in the job does not take the view for the work tree.
  CHECK_FALSE(fs::exists(fs::symlink_status(w + "/.git")));

  // A submission retried in the same run replaces the view.
  SnapshotDecision d2 = r.take();
  REQUIRE(d2.snapshot);
  record_snapshot(run_dir, d2);
  CHECK(test::text_of(w + "/prog.txt") == "v2\n");
  CHECK(test::text_of(w + "/late.txt") == "late\n");
  CHECK_FALSE(fs::exists(w + "/results.txt"));
  for (const auto& e : fs::directory_iterator(run_dir))
    CHECK(e.path().filename().string().find("partial") == std::string::npos);
}

TEST_CASE("the job's working directory from a subfolder: the whole tree mirrored, the job in the subfolder's place") {
  test::SnapshotRepo r;
  r.sh("git init -q -b main . && mkdir -p exp common && echo e >exp/run.sh && echo c >common/cfg.yaml && "
       "git add -A && git commit -qm one && mkdir exp/ckpt");
  SnapshotDecision d = r.take("", r.top + "/exp");
  REQUIRE(d.snapshot);
  std::string run_dir = r.runs + "/run-2";
  fs::create_directories(run_dir);
  record_snapshot(run_dir, d);
  CHECK(job_workdir(run_dir) == run_dir + "/workdir/exp");
  // ../common from the job's working directory is the snapshot's too.
  CHECK(test::text_of(run_dir + "/workdir/exp/../common/cfg.yaml") == "c\n");
  CHECK(fs::read_symlink(run_dir + "/workdir/exp/ckpt") == r.top + "/exp/ckpt");
}

TEST_CASE("a run without a snapshot records why and keeps the submit folder as the working directory") {
  ScratchDir t("ddpctl-unit");
  record_snapshot(t.path(), SnapshotDecision{std::nullopt, "snapshot: false"});
  CHECK(job_workdir(t.path()).empty());
  CHECK_FALSE(fs::exists(t.path() + "/workdir"));
  CHECK(snapshot_summary(t.path()) == "runs in place: snapshot: false");
}

TEST_CASE("with a snapshot, output_dir and the trainer's folders are the submit folder's, named absolute") {
  ResolvedRun run = load_and_resolve(test::source_dir() + "/configs/local-cpu.yaml", {"output_dir=logs", "trainer.checkpoint_dir=ckpt", "trainer.data=../data"});
  Snapshot s;
  s.dir = s.code_dir = "/runs/.snapshots/abc";
  s.live_dir = "/home/u/proj";
  apply_snapshot(run, SnapshotDecision{s, ""}, "/home/u/proj");
  CHECK(run.spec.output_dir == "/home/u/proj/logs");
  const auto& d = run.shapes.front().directives;
  CHECK(std::find(d.begin(), d.end(), "--output=/home/u/proj/logs/%x_%j.out") != d.end());
  CHECK(std::find(d.begin(), d.end(), "--error=/home/u/proj/logs/%x_%j.err") != d.end());
  const auto& a = run.spec.trainer_args;
  CHECK(std::find(a.begin(), a.end(), "--checkpoint-dir=/home/u/proj/ckpt") != a.end());
  CHECK(std::find(a.begin(), a.end(), "--data=/home/u/data") != a.end());
  CHECK(run.spec.trainer_data == std::optional<std::string>("/home/u/data"));
}

TEST_CASE("the script of a run with a snapshot: the submit folder named, the view checked, topped up and its new files named") {
  ResolvedRun run = load_and_resolve(test::source_dir() + "/configs/local-cpu.yaml", {});
  Snapshot s;
  s.dir = "/runs/.snapshots/abc";
  s.code_dir = "/runs/.snapshots/abc/exp";
  s.live_dir = "/home/u/proj";
  apply_snapshot(run, SnapshotDecision{s, ""}, "/home/u/proj/exp");
  std::string text = render_scripts(run, test::source_dir() + "/templates").front().text;
  CHECK_THAT(text, Catch::Contains("ddpctl_workdir=${ddpctl_workdir%/exp}"));
  CHECK_THAT(text, Catch::Contains("export DDPCTL_SNAPSHOT=/runs/.snapshots/abc DDPCTL_SUBMIT_DIR=/home/u/proj/exp"));
  CHECK_THAT(text, Catch::Contains("export PYTHONPATH=/runs/.snapshots/abc/exp${PYTHONPATH:+:$PYTHONPATH}"));
  CHECK_THAT(text, Catch::Contains("for ddpctl_f in /home/u/proj\"${ddpctl_d#"));
  CHECK_THAT(text, Catch::Contains("trap ddpctl_workdir_files EXIT"));
}

TEST_CASE("in a container, the view, the snapshot and the live folder its links lead to are bound") {
  std::string text =
      "name: r\ncluster: local\npartition: cpu\nnodes: 1\ngpus_per_node: 0\nprocs_per_node: 1\ncommand: [python3, t.py]\n"
      "output_dir: /home/u/proj/logs\ncontainer: {runtime: apptainer, image: /i/x.sif, mounts: [cache]}\n";
  std::string profile = test::run_bash("cat \"$1\"", {test::source_dir() + "/configs/clusters/local.yaml"});
  ResolvedRun run = resolve_run(parse_run_spec("/specs/a.yaml", text), parse_cluster_profile("site.yaml", profile));
  ContainerScript cs = container_script(*run.container, run.spec, 0, "/runs/.snapshots/abc", {}, "/home/u/proj");
  CHECK_THAT(cs.words, Catch::StartsWith("apptainer --nocolor exec --bind \"$ddpctl_workdir\" --bind /home/u/proj "
                                         "--bind /runs/.snapshots/abc --bind \"$DDPCTL_SUBMIT_DIR\"/cache --pwd \"$PWD\""));
  // A runs folder whose path the bind list would split is refused at submit.
  Snapshot s;
  s.dir = s.code_dir = "/scratch/a,b/runs/.snapshots/abc";
  s.live_dir = "/home/u/proj";
  std::string err = user_error_of([&] { apply_snapshot(run, SnapshotDecision{s, ""}, "/home/u/proj"); });
  CHECK_THAT(err, Catch::Contains("/specs/a.yaml:9") && Catch::Contains("the code snapshot") &&
                      Catch::Contains("--no-snapshot"));
}
