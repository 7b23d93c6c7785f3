// Run directories and the ledger: written atomically, read back whole.
#include "catch.hpp"
#include <filesystem>

#include "files.hpp"
#include "helpers.hpp"
#include "jobs.hpp"
#include "runs.hpp"

using namespace ddpctl;
namespace fs = std::filesystem;

namespace {
using test::TempDir;

Run make_run(const std::string& root) {
  ResolvedRun resolved = load_and_resolve(test::source_dir() + "/configs/local-cpu.yaml", {});
  return create_run(root, resolved, "name: local-cpu\n", {"nodes=2"}, "hash1", {{"local-cpu.sbatch", "#!/bin/bash\n"}});
}
}  // namespace

TEST_CASE("a new run directory holds the spec, the scripts, run.json and an empty ledger") {
  TempDir t;
  Run run = make_run(t.path);
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
  Run run = make_run(t.path);
  Attempt a;
  a.token = new_token();
  a.shape = "2x2";
  a.argv = {"sbatch", "--parsable", "--comment=ddpctl:" + a.token, "x y"};
  a.intent_at = utc_now_iso();
  run.attempts.push_back(a);
  save_ledger(run);
  Run mid = load_run(run.dir);
  REQUIRE(mid.attempts.size() == 1);
  CHECK(mid.attempts[0].outcome == Outcome::Intent);
  CHECK_FALSE(mid.attempts[0].settled());
  run.attempts[0].outcome = Outcome::Submitted;
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

TEST_CASE("the run identity changes with the text, the overrides, the shape and the race") {
  std::string h = run_identity({{"a.yaml", "x"}}, {}, "1x4");
  CHECK(h == run_identity({{"a.yaml", "x"}}, {}, "1x4"));
  CHECK(h != run_identity({{"a.yaml", "y"}}, {}, "1x4"));
  CHECK(h != run_identity({{"b.yaml", "x"}}, {}, "1x4"));
  CHECK(h != run_identity({{"a.yaml", "x"}}, {"nodes=2"}, "1x4"));
  CHECK(h != run_identity({{"a.yaml", "x"}}, {}, "4x1"));
  std::string race = run_identity({{"a.yaml", "x"}}, {}, "");
  CHECK(race != h);
  CHECK(race != run_identity({{"a.yaml", "x"}, {"b.yaml", "z"}}, {}, ""));
}

TEST_CASE("the run identity of earlier versions' records is kept") {
  // Hashes written by ddpctl 0.1 for `submit --shape` and for a race: runs
  // recorded then must still be found as "the same run".
  CHECK(run_identity({{"/specs/a.yaml", "name: a\n"}}, {"nodes=2"}, "2x1") == "9414feb6ceaf583a");
  CHECK(run_identity({{"/specs/a.yaml", "name: a\n"}, {"/specs/b.yaml", "name: b\n"}}, {}, "") ==
        "0bdfa651c1638c96");
}

TEST_CASE("ledger outcomes read back, and an unknown word is kept unsettled") {
  for (Outcome o : {Outcome::Intent, Outcome::Submitted, Outcome::Rejected, Outcome::Unconfirmed, Outcome::Absent})
    CHECK(parse_outcome(outcome_name(o)) == o);
  CHECK_FALSE(parse_outcome("maybe").has_value());
}

TEST_CASE("runs are found by id, by name (latest), and by unique prefix") {
  TempDir t;
  Run first = make_run(t.path);
  Run second = make_run(t.path);
  CHECK(find_run(t.path, first.id).id == first.id);
  CHECK(find_run(t.path, "local-cpu").id == list_runs(t.path).back().id);
  CHECK(find_run(t.path, second.dir).id == second.id);
  CHECK_THAT(test::user_error_of([&] { find_run(t.path, "nope"); }), Catch::Contains("no run"));
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
  std::string path = t.path + "/p.json";
  CHECK_FALSE(read_progress(path));
  write_file_atomic(path, R"({"epoch":1,"epochs":3,"step":5,"steps":10,"samples_per_s":99.5,"eta_s":12})");
  auto p = read_progress(path);
  REQUIRE(p);
  CHECK(p->steps == 10);
  CHECK(progress_path("/o", "job", "12") == "/o/job_12.progress.json");
}

TEST_CASE("ledger updates are read-modify-write: writers holding stale copies lose nothing") {
  TempDir t;
  Run created = make_run(t.path);
  Run a = load_run(created.dir), b = load_run(created.dir);  // two ddpctls, each with its own copy
  Attempt x;
  x.token = "xxxxxxxxxxxx";
  update_ledger(a, [&](std::vector<Attempt>& all) { attempt_by_token(all, x.token) = x; });
  Attempt y;
  y.token = "yyyyyyyyyyyy";
  update_ledger(b, [&](std::vector<Attempt>& all) { attempt_by_token(all, y.token) = y; });
  CHECK(b.attempts.size() == 2);  // b's copy was refreshed, not written over a
  update_ledger(a, [&](std::vector<Attempt>& all) { attempt_by_token(all, x.token).outcome = Outcome::Absent; });
  Run back = load_run(created.dir);
  REQUIRE(back.attempts.size() == 2);
  CHECK(back.attempts[0].token == x.token);
  CHECK(back.attempts[0].outcome == Outcome::Absent);
  CHECK(back.attempts[1].token == y.token);
  CHECK(identity_lock_path("runs", "abc") == "runs/.locks/abc.lock");
}
