// The ledger's words (ledger.hpp): tokens and the job comments that carry
// them, outcomes both ways. The ledger as the run store writes and reads it back:
// tests/unit/script/test_runs_ledger.cpp.
#include "catch.hpp"

#include "runs/ledger.hpp"

using namespace ddpctl;

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

TEST_CASE("a job's comment carries ddpctl's token first, and the token is found with or without the user's words") {
  CHECK(job_comment("abc123") == "ddpctl:abc123");
  CHECK(job_comment("abc123", "lr sweep") == "ddpctl:abc123 lr sweep");
  CHECK(comment_has_token("ddpctl:abc123", "abc123"));
  CHECK(comment_has_token("ddpctl:abc123 lr sweep", "abc123"));
  CHECK_FALSE(comment_has_token("ddpctl:abc1234", "abc123"));
  CHECK_FALSE(comment_has_token("ddpctl:abc12", "abc123"));
  CHECK_FALSE(comment_has_token("lr sweep ddpctl:abc123", "abc123"));
}
