// Run directories and the ledger: written atomically, read back whole.
#include <catch2/catch.hpp>
#include <filesystem>

#include "files.hpp"
#include "helpers.hpp"
#include "jobs.hpp"
#include "runs.hpp"

using namespace ddpctl;
namespace fs = std::filesystem;

namespace {
struct TempDir {
  fs::path path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "ddpctl-runs.XXXXXX").string();
    path = mkdtemp(t.data());
  }
  ~TempDir() { fs::remove_all(path); }
};

Run make_run(const std::string& root) {
  ResolvedRun resolved = load_and_resolve(test::source_dir() + "/configs/local-cpu.yaml", {});
  return create_run(root, resolved, "name: local-cpu\n", {"nodes=2"}, "hash1", {{"local-cpu.sbatch", "#!/bin/bash\n"}});
}
}  // namespace

TEST_CASE("a new run directory holds the spec, the scripts, run.json and an empty ledger") {
  TempDir t;
  Run run = make_run(t.path.string());
  CHECK(run.id.rfind("local-cpu-", 0) == 0);
  for (const char* f : {"spec.yaml", "local-cpu.sbatch", "run.json", "ledger.json"})
    CHECK(fs::exists(fs::path(run.dir) / f));
  Run back = load_run(run.dir);
  CHECK(back.name == "local-cpu");
  CHECK(back.cluster == "local");
  CHECK(back.spec_hash == "hash1");
  CHECK(back.overrides == std::vector<std::string>{"nodes=2"});
  REQUIRE(back.shapes.size() == 1);
  CHECK(back.shapes[0].nodes == 2);
  CHECK(back.shapes[0].ranks_per_node == 2);
  CHECK(back.attempts.empty());
}

TEST_CASE("ledger records survive a reload exactly") {
  TempDir t;
  Run run = make_run(t.path.string());
  Attempt a;
  a.token = new_token();
  a.shape = "2x2";
  a.argv = {"sbatch", "--parsable", "--comment=ddpctl:" + a.token, "x y"};
  a.intent_at = utc_now_iso();
  run.attempts.push_back(a);
  save_ledger(run);
  Run mid = load_run(run.dir);
  REQUIRE(mid.attempts.size() == 1);
  CHECK(mid.attempts[0].outcome == "intent");
  CHECK_FALSE(mid.attempts[0].settled());
  run.attempts[0].outcome = "submitted";
  run.attempts[0].job_id = "77";
  save_ledger(run);
  Run back = load_run(run.dir);
  CHECK(back.attempts[0].argv == a.argv);
  CHECK(back.attempts[0].job_id == "77");
  CHECK(back.latest_job()->job_id == "77");
}

TEST_CASE("tokens are unique and comments carry them") {
  std::string a = new_token(), b = new_token();
  CHECK(a.size() == 12);
  CHECK(a != b);
  CHECK(job_comment(a) == "ddpctl:" + a);
}

TEST_CASE("the spec hash changes with the text and the overrides") {
  std::string h = spec_hash("a.yaml", "x", {});
  CHECK(h == spec_hash("a.yaml", "x", {}));
  CHECK(h != spec_hash("a.yaml", "y", {}));
  CHECK(h != spec_hash("a.yaml", "x", {"nodes=2"}));
}

TEST_CASE("runs are found by id, by name (latest), and by unique prefix") {
  TempDir t;
  Run first = make_run(t.path.string());
  Run second = make_run(t.path.string());
  CHECK(find_run(t.path.string(), first.id).id == first.id);
  CHECK(find_run(t.path.string(), "local-cpu").id == list_runs(t.path.string()).back().id);
  CHECK(find_run(t.path.string(), second.dir).id == second.id);
  CHECK_THAT(test::user_error_of([&] { find_run(t.path.string(), "nope"); }), Catch::Contains("no run"));
}

TEST_CASE("UTC timestamps read back") {
  std::string now = utc_now_iso();
  CHECK(parse_utc_iso(now) > 1700000000);
  CHECK(parse_utc_iso("2026-11-22T08:00:00Z") == 1795334400);
  CHECK(parse_utc_iso("garbage") == 0);
}

TEST_CASE("progress lines: epoch, bar, throughput, ETA") {
  Progress p;
  p.epoch = 2;
  p.epochs = 10;
  p.step = 250;
  p.steps = 500;
  p.samples_per_s = 1520.4;
  p.eta_s = 340;
  CHECK(format_progress(p) == "epoch 2/10 [#####-----] 250/500 1520 img/s ETA 5m40s");
  CHECK(format_duration(3725) == "1h02m");
  CHECK(format_duration(12) == "12s");
}

TEST_CASE("progress files are read, and a missing one is no progress") {
  TempDir t;
  std::string path = (t.path / "p.json").string();
  CHECK_FALSE(read_progress(path));
  write_file_atomic(path, R"({"epoch":1,"epochs":3,"step":5,"steps":10,"samples_per_s":99.5,"eta_s":12})");
  auto p = read_progress(path);
  REQUIRE(p);
  CHECK(p->steps == 10);
  CHECK(progress_path("/o", "job", "12") == "/o/job_12.progress.json");
}
