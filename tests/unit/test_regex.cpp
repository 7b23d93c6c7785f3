// Regular expressions over logs and spec patterns (regex.hpp): no line is
// too long and no pattern too pathological for them. libstdc++'s std::regex,
// which ddpctl used before, recursed once per character `.*` consumed (a
// ~50,000-character line overflowed the stack) and backtracked
// exponentially; each case below crashed or hung it.
#include "catch.hpp"

#include "regex.hpp"

using namespace ddpctl;

TEST_CASE("regex: a line of 300,000 characters is searched and matched whole") {
  std::string line = "FATAL: " + std::string(300000, 'x') + " end";
  Regex anything(R"(^FATAL: (.*) end$)");
  RegexMatch m;
  REQUIRE(anything.full_match(line, &m));
  CHECK(m.str(1).size() == 300000);
  CHECK(Regex(R"(x.*?end)").search(line));
  CHECK_FALSE(Regex(R"(^FATAL: .*y)").search(line));
}

TEST_CASE("regex: a backtracking pattern ends on the line that makes backtracking engines run for minutes") {
  // (a+)+$ against a's followed by something else: 2^n paths for a
  // backtracking engine; one pass for RE2. No timing asserted: it ends.
  Regex bad(R"(Epoch (?P<epoch>\d+) (a+)+$)");
  CHECK_FALSE(bad.search("Epoch 1 " + std::string(40, 'a') + "!"));
  CHECK(bad.search("Epoch 1 " + std::string(40, 'a')));
}

TEST_CASE("regex: huge and deeply nested patterns compile or are refused, never crash") {
  std::string problem;
  std::string deep = std::string(20000, '(') + "a" + std::string(20000, ')');
  auto d = Regex::compile(deep, &problem);
  if (d) CHECK(d->search("a"));
  else CHECK_FALSE(problem.empty());
  auto l = Regex::compile("Epoch (?P<epoch>\\d+) " + std::string(90000, 'x'), &problem);
  if (l) CHECK_FALSE(l->search("Epoch 1 xxx"));
  else CHECK_FALSE(problem.empty());
  // What the engine cannot compile comes back in its own words, not on stderr.
  CHECK_FALSE(Regex::compile("(a", &problem));
  CHECK(problem == "missing ): (a");
  CHECK_FALSE(Regex::compile("a(?=b)", &problem));
  CHECK(problem.find("(?=") != std::string::npos);
  CHECK_THROWS_AS(Regex("(a"), std::logic_error);  // ddpctl's own patterns: a bug
}

TEST_CASE("regex: groups that took no part, named groups, bytes that are not UTF-8") {
  Regex r(R"(rank (\d+) (?:(killed)|(exited)) (?P<code>\d+)?)");
  RegexMatch m;
  REQUIRE(r.search("ddp-train: rank 3 exited ", &m));
  CHECK(m.str(1) == "3");
  CHECK_FALSE(m.matched(2));
  CHECK(m.matched(3));
  CHECK_FALSE(m.matched(4));
  REQUIRE(r.named_groups().size() == 1);
  CHECK(r.named_groups()[0] == std::make_pair(std::string("code"), 4));
  CHECK(r.group_count() == 4);
  // A log is bytes: invalid UTF-8 is matched like any other character.
  CHECK(Regex("^a.b$").full_match("a\xff" "b"));
}

TEST_CASE("regex: replacing the first or every match, the replacement taken literally") {
  Regex colour("\x1b\\[[0-9;]*m");
  CHECK(colour.replace_all("\x1b[31mFATAL\x1b[0m: x", "") == "FATAL: x");
  CHECK(Regex(R"(^\[\w*\d+\]:)").replace_first("[default0]:ValueError: [x1]:", "") == "ValueError: [x1]:");
  CHECK(Regex("b").replace_all("abcb", "\\1$0") == "a\\1$0c\\1$0");
  CHECK(Regex("x*").replace_all("ab", "-") == "-a-b-");
  CHECK(Regex("z").replace_first("ab", "-") == "ab");
}
