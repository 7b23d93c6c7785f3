// A run spec's metric: patterns over a rank-0 log (metric_pattern.hpp): the
// last match of each named group, read in time linear in each line's length
// whatever the pattern, \Q...\E quotes taken literally, and the patterns
// that would match everywhere refused. The spec's own errors (file:line) and
// report's use of the values: test_report_grid.cpp.
#include "catch.hpp"

#include "spec/metric_pattern.hpp"

using namespace ddpctl;

namespace {

MetricSpec patterns(std::vector<std::string> p) {
  MetricSpec m;
  m.patterns = std::move(p);
  return m;
}

}  // namespace

TEST_CASE("metric: a line of 4 MiB with a match at every character is read in one pass") {
  // Every '1' is a match, and each could go on to a 'z' that never comes: a
  // search after each match scans the rest of the line again, 4 million
  // times (at 80,000 characters that took 12 s; at 4 MiB it would take
  // hours). One pass takes well under a second: no timing is asserted, a
  // quadratic reading hangs here.
  std::string line(4u << 20, '1');
  line.back() = '7';
  auto v = read_metric_values(patterns({"(?P<v>\\d)(?:.*z)?"}), {line});
  CHECK(v.at("v") == 7);
  // Where the tail is there, the first match takes the whole line.
  v = read_metric_values(patterns({"(?P<v>\\d)(?:.*z)?"}), {line + "z"});
  CHECK(v.at("v") == 1);
}

TEST_CASE("metric: on a line the last match wins, a later line over an earlier one") {
  auto m = patterns({"loss=(?P<loss>[0-9.]+)", "(?P<acc>[0-9.]+)% acc"});
  auto v = read_metric_values(m, {"loss=3 loss=2.5 12.5% acc 50.25% acc", "loss=0.5,"});
  CHECK(v.at("loss") == Approx(0.5));
  CHECK(v.at("acc") == Approx(50.25));  // the whole number, not its last digits
  // A group that took no part in the last match keeps its value from the one before.
  v = read_metric_values(patterns({"(?:loss=(?P<loss>\\d+)|acc=(?P<acc>\\d+))"}), {"loss=4 acc=5 loss=6"});
  CHECK(v.at("loss") == 6);
  CHECK(v.at("acc") == 5);
  // Where the last match's text is no number, that line gives the metric none.
  v = read_metric_values(patterns({"loss=(?P<loss>\\S+)"}), {"loss=2", "loss=1 loss=n/a"});
  CHECK(v.at("loss") == 2);
  // ^ is the start of the line only, not where the match before ended.
  v = read_metric_values(patterns({"^(?P<n>\\d)"}), {"12345"});
  CHECK(v.at("n") == 1);
}

TEST_CASE("metric: (?<name> inside an RE2 quote (backslash Q to backslash E) is text, not a group") {
  auto m = patterns({R"(\Q(?<x>\E(?<v>\d+))"});
  CHECK_FALSE(metric_pattern_problem(m.patterns[0]));
  CHECK(metric_names(m) == std::vector<std::string>{"v"});
  auto v = read_metric_values(m, {"(?<x>5"});
  REQUIRE(v.count("v"));
  CHECK(v.at("v") == 5);
  // A quote left open runs to the end of the pattern.
  v = read_metric_values(patterns({R"((?<v>\d+)\Q (?<)"}), {"8 (?<"});
  REQUIRE(v.count("v"));
  CHECK(v.at("v") == 8);
}

TEST_CASE("metric: a pattern that can match an empty text is refused") {
  for (const char* p : {"(?P<v>\\d*)", "(?P<v>[0-9.]+)?", "\\b(?P<v>\\d*)", "^(?P<v>\\d*)$", "(?m)^(?P<v>\\d*)$"})
    CHECK_THAT(metric_pattern_problem(p).value_or("accepted: " + std::string(p)),
               Catch::StartsWith("can match an empty text"));
  for (const char* p : {"(?P<v>\\d+)", "v=(?P<v>\\d*)", "(?P<v>\\d*)%"}) CHECK_FALSE(metric_pattern_problem(p));
}
