// Regular expressions over logs and spec patterns (regex.hpp): no line is
// too long and no pattern too pathological for them. libstdc++'s std::regex,
// which ddpctl used before, recursed once per character `.*` consumed (a
// ~50,000-character line overflowed the stack) and backtracked
// exponentially; each case below crashed or hung it.
#include "catch.hpp"

#include <random>
#include <re2/re2.h>

#include "base/regex.hpp"

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

namespace {

// The reference: every match left to right, each search going on where the
// one before ended (one character on after an empty match), in the whole
// text's context; per group, its text in the last match it took part in.
std::vector<std::optional<std::pair<size_t, size_t>>> last_by_searching(const re2::RE2& re, const std::string& text) {
  int n = re.NumberOfCapturingGroups() + 1;
  std::vector<std::optional<std::pair<size_t, size_t>>> out(static_cast<size_t>(n));
  std::vector<re2::StringPiece> g(static_cast<size_t>(n));
  size_t from = 0;
  while (from <= text.size() && re.Match(text, from, text.size(), RE2::UNANCHORED, g.data(), n)) {
    for (int i = 1; i < n; ++i)
      if (g[i].data()) out[i] = std::make_pair(static_cast<size_t>(g[i].data() - text.data()), g[i].size());
    size_t end = static_cast<size_t>(g[0].data() - text.data()) + g[0].size();
    from = g[0].empty() ? end + 1 : end;
  }
  return out;
}

}  // namespace

TEST_CASE("regex: the last match in one pass is the last of the matches searched one after another") {
  // Every pattern that cannot match an empty text, over every text the
  // generator makes (a fixed seed: the same texts each run).
  const std::vector<std::string> patterns = {
      "(a)", "a(b)?", "(a+)", "(a|ab)(c|bcd)?", "(?P<v>a)(?:.*c)?", "x=(\\d+)", "(\\d+)%", "(a*)b", "\\b(\\w+)\\b",
      "^(a)", "(a)$", "(ab|a)(b*)", "(a)|(b)", "(?:(a)|b)c", "(a|b)*c", "(a)(?:b|$)", "(.)b", R"((a??)(b))", "(a)?b",
      "(?i)(A)", "(?m)^(\\w)", "\\B(b)", "(?:x=)?(\\d)(?:.*=)?"};
  std::mt19937 random(49);
  const std::string alphabet = "abc1 %=x\n";
  for (const auto& p : patterns) {
    re2::RE2 plain(p, re2::RE2::Latin1);
    Regex last(last_match_pattern(p));
    REQUIRE(plain.ok());
    CHECK_FALSE(Regex(p).can_match_empty());
    for (int k = 0; k < 3000; ++k) {
      std::string text;
      for (size_t i = 0, len = random() % 14; i < len; ++i) text += alphabet[random() % alphabet.size()];
      auto want = last_by_searching(plain, text);
      RegexMatch m;
      REQUIRE(last.search(text, &m));
      std::vector<std::optional<std::pair<size_t, size_t>>> got(want.size());
      for (size_t i = 1; i < want.size(); ++i)
        if (m.matched(i)) got[i] = std::make_pair(static_cast<size_t>(m.groups[i]->data() - text.data()), m.groups[i]->size());
      INFO("pattern " << p << " text '" << text << "'");
      CHECK(got == want);
    }
  }
}

TEST_CASE("regex: which patterns can match an empty text, whatever the characters beside it") {
  for (const char* p : {"a*", "(a|)", "\\b", "^$", "(?m)^$", "\\Bb?", "x*$", "\\A", "(?:a+)?\\z"}) CHECK(Regex(p).can_match_empty());
  for (const char* p : {"a", "a+", "a*b", "\\ba+", "(?:a|b)c?", "^a*$."}) CHECK_FALSE(Regex(p).can_match_empty());
}

TEST_CASE("regex: (?<name> is RE2's (?P<name>, except in a class, an escape or a quote (backslash Q to backslash E)") {
  std::vector<std::string> names;
  CHECK(with_p_names(R"((?<a>x)(?P<b>y)[(?<c>]\(?<d>\Q(?<e>\E(?<f>z)(?<=g)(?<!h))", &names) ==
        R"((?P<a>x)(?P<b>y)[(?<c>]\(?<d>\Q(?<e>\E(?P<f>z)(?<=g)(?<!h))");
  CHECK(names == std::vector<std::string>{"a", "b", "f"});
  // In a quote a backslash is text, and the first \E ends it (RE2's rule).
  CHECK(with_p_names(R"(\Qa\\E(?<g>x))") == R"(\Qa\\E(?P<g>x))");
  CHECK(with_p_names(R"(\Q(?<open)") == R"(\Q(?<open)");
  // The last-match pattern closes a quote left open before its own ")".
  CHECK(Regex(last_match_pattern("(\\d)\\Q)(")).full_match("1)(2)("));
}
