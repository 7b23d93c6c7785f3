// The ledger: every attempt recorded before and after sbatch, read back
// exactly, updated read-modify-write under its lock.
#include "catch.hpp"
#include <filesystem>

#include "files.hpp"
#include "helpers.hpp"
#include "ledger.hpp"
#include "runs.hpp"

using namespace ddpctl;
namespace fs = std::filesystem;

namespace {
using test::TempDir;
}  // namespace

TEST_CASE("ledger records survive a reload exactly") {
  TempDir t;
  Run run = test::make_local_cpu_run(t.path);
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

TEST_CASE("ledger outcomes read back, and an unknown word is kept unsettled") {
  for (Outcome o : {Outcome::Intent, Outcome::Submitted, Outcome::Rejected, Outcome::Unconfirmed, Outcome::Absent})
    CHECK(parse_outcome(outcome_name(o)) == o);
  CHECK_FALSE(parse_outcome("maybe").has_value());
}

TEST_CASE("ledger updates are read-modify-write: writers holding stale copies lose nothing") {
  TempDir t;
  Run created = test::make_local_cpu_run(t.path);
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
