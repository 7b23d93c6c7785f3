// The ledger's words (ledger.hpp): tokens and the comments that carry them,
// outcomes both ways. The ledger as the run store writes and reads it back:
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
