// The run store: run directories written whole, found by id, name or prefix.
#include "catch.hpp"
#include <filesystem>

#include "base/files.hpp"
#include "helpers.hpp"
#include "runs/run_store.hpp"

using namespace ddpctl;
namespace fs = std::filesystem;

namespace {
using test::TempDir;
}  // namespace

TEST_CASE("a new run directory holds the spec, the scripts, run.json and an empty ledger") {
  TempDir t;
  Run run = test::make_local_cpu_run(t.path);
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

TEST_CASE("runs are found by id, by name (latest), and by unique prefix") {
  TempDir t;
  Run first = test::make_local_cpu_run(t.path);
  Run second = test::make_local_cpu_run(t.path);
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
