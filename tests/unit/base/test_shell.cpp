// shell_quote torture test: what bash reads back must be exactly what went in.
#include <filesystem>

#include "catch.hpp"
#include <random>

#include "helpers.hpp"
#include "base/shell.hpp"

using ddpctl::shell_quote;
using ddpctl::test::run_bash;

TEST_CASE("shell_quote leaves safe words untouched") {
  for (const char* s : {"abc", "ABC_123", "a100-80gb", "/scratch/lusu/data", "--epochs=3", "gpu:a100:4", "user@host",
                        "a,b", "x=1", "50%", "1e-4", "+5"})
    CHECK(shell_quote(s) == s);
}

TEST_CASE("shell_quote single-quotes everything else") {
  CHECK(shell_quote("") == "''");
  CHECK(shell_quote("a b") == "'a b'");
  CHECK(shell_quote("$(rm -rf ~)") == "'$(rm -rf ~)'");
  CHECK(shell_quote("it's") == "'it'\\''s'");
  CHECK(shell_quote("=x") == "'=x'");
  CHECK(shell_quote("%1") == "'%1'");
  CHECK(shell_quote("~") == "'~'");
  CHECK(shell_quote("a*") == "'a*'");
}

TEST_CASE("bash reads back exactly the quoted value") {
  std::vector<std::string> hostile = {
      "", " ", "'", "''", "\"", "\\", "$HOME", "${HOME}", "$(id)", "`id`", "a;b", "a&&b", "a|b", "a>b", "<a",
      "#comment", "!!", "~root", "*", "?", "[a]", "{a,b}", "a\tb", "--wrap=id", "-rf", "'$(id)'", "\"$(id)\"",
      "\\'", "ünïcödé", "日本語", "a\nb", "\x01\x7f"};
  std::mt19937 rng(42);
  for (int i = 0; i < 200; ++i) {
    std::string s;
    int len = static_cast<int>(rng() % 24);
    for (int k = 0; k < len; ++k) s += static_cast<char>(1 + rng() % 255);  // any byte but NUL
    hostile.push_back(s);
  }
  // One bash run for all: each word printed NUL-terminated.
  std::string script = "printf '%s\\0'";
  for (const auto& s : hostile) script += " " + shell_quote(s);
  std::string out = run_bash(script);
  std::vector<std::string> back;
  for (size_t start = 0; start < out.size();) {
    size_t nul = out.find('\0', start);
    back.push_back(out.substr(start, nul - start));
    start = nul + 1;
  }
  REQUIRE(back.size() == hostile.size());
  for (size_t i = 0; i < hostile.size(); ++i) CHECK(back[i] == hostile[i]);
}

TEST_CASE("PATH-like assignments expand only the variable itself, without an empty entry") {
  using ddpctl::shell_assignment_value;
  struct Case {
    const char* value;
    const char* set;    // the variable's value before, or nullptr for unset
    const char* expect;
  } cases[] = {
      {"/opt/x/bin:$PATH", "/usr/bin:/bin", "/opt/x/bin:/usr/bin:/bin"},
      {"/opt/x/bin:${PATH}", "/usr/bin", "/opt/x/bin:/usr/bin"},
      {"$PATH:/opt/x/bin", "/usr/bin", "/usr/bin:/opt/x/bin"},
      {"/opt/x/bin:$PATH", nullptr, "/opt/x/bin"},  // no trailing ':' (the current folder)
      {"$PATH:/opt/x/bin", nullptr, "/opt/x/bin"},
      {"/a:$PATH:/b", "/m", "/a:/m:/b"},
      {"/opt/$(id)/bin:$PATH", "/usr/bin", "/opt/$(id)/bin:/usr/bin"},  // only $PATH expands
      {"/opt/x bin:$PATHS", "/usr/bin", "/opt/x bin:$PATHS"},           // another name: literal
  };
  for (const auto& c : cases) {
    INFO(c.value);
    std::string script = std::string(c.set ? "export PATH=" + shell_quote(c.set) + "; " : "unset PATH; ") +
                         "set -u; V=" + shell_assignment_value("PATH", c.value) + "; printf '%s' \"$V\"";
    CHECK(run_bash("/bin/bash -c " + shell_quote(script)) == c.expect);
  }
  CHECK(ddpctl::refers_to_itself("PATH", "/opt/x:$PATH"));
  CHECK(ddpctl::refers_to_itself("PATH", "${PATH}:/opt"));
  CHECK_FALSE(ddpctl::refers_to_itself("PATH", "/opt/x:$PATHS"));
  CHECK_FALSE(ddpctl::refers_to_itself("PATH", "/nonexistent"));
}

TEST_CASE("shell_quoting_of reads a line's quotes as bash does, and shell_variable_at expands exactly there") {
  using ddpctl::shell_quoting_of;
  using ddpctl::shell_variable_at;
  using ddpctl::ShellQuoting;
  using Q = ShellQuoting;
  // The quoting at the position of each X in the line.
  auto at_x = [](const std::string& line) {
    std::vector<ShellQuoting> q = shell_quoting_of(line), out;
    for (size_t i = 0; i < line.size(); ++i)
      if (line[i] == 'X') out.push_back(q[i]);
    return out;
  };
  CHECK(at_x("a X \"X\" 'X' $'X' X") == std::vector<Q>{Q::Unquoted, Q::Double, Q::Single, Q::AnsiC, Q::Unquoted});
  CHECK(at_x("\"a $(b 'X' \"X\" X) X\" X") == std::vector<Q>{Q::Single, Q::Double, Q::Unquoted, Q::Double, Q::Unquoted});
  CHECK(at_x("\\\"X \"\\\"X\" '\\'X") == std::vector<Q>{Q::Unquoted, Q::Double, Q::Unquoted});
  CHECK(at_x("${a:-X} \"${b:-'X'}\" `c X` $((1 + (2) )) X") ==
        std::vector<Q>{Q::Parameter, Q::Parameter, Q::Unquoted, Q::Unquoted});
  CHECK(at_x("echo x # it's X") == std::vector<Q>{Q::Unquoted});
  CHECK(at_x("a#'X'") == std::vector<Q>{Q::Single});  // not a word's start: no comment
  CHECK_FALSE(shell_variable_at(Q::Parameter, "V"));
  // What bash makes of each form, for a value it must not touch.
  const std::string value = "a 'b' \"c\" $(touch M) * \\";
  std::vector<std::string> lines = {"printf '%s\\0' X", "printf '%s\\0' \"<X>\"", "printf '%s\\0' '<X>'",
                                    "printf '%s\\0' $'<X>'", "printf '%s\\0' \"$(printf %s X)\"",
                                    "printf '%s\\0' \"`printf %s X`x\""};
  ddpctl::test::TempDir dir;
  for (const auto& line : lines) {
    std::vector<ShellQuoting> q = shell_quoting_of(line);
    size_t x = line.find('X');
    std::string put = line.substr(0, x) + *shell_variable_at(q[x], "V") + line.substr(x + 1);
    std::string expect = line.find('<') != std::string::npos ? "<" + value + ">" : value;
    if (line.find('`') != std::string::npos) expect = value + "x";
    INFO(line << " -> " << put);
    CHECK(run_bash("cd " + shell_quote(dir.path) + " && export V=" + shell_quote(value) + " && " + put) ==
          expect + '\0');
  }
  CHECK_FALSE(std::filesystem::exists(dir.path + "/M"));
}

TEST_CASE("shell_quoting_of: a case pattern's ) inside $( ) does not end the $( )") {
  using ddpctl::shell_quoting_of;
  using ddpctl::shell_variable_at;
  using Q = ddpctl::ShellQuoting;
  const std::string line = "printf '%s\\0' \"$(case a in a) printf %s X;; (b) :;; esac)\" X";
  std::vector<Q> q = shell_quoting_of(line);
  size_t x = line.find('X'), last = line.rfind('X');
  CHECK(q[x] == Q::Unquoted);     // inside $( ), which starts afresh
  CHECK(q[last] == Q::Unquoted);  // after the whole "...", the line's own
  // What bash makes of it: a value with blanks and a glob stays one word.
  const std::string put = line.substr(0, x) + *shell_variable_at(q[x], "V") + line.substr(x + 1, last - x - 1) + "-";
  ddpctl::test::TempDir dir;
  CHECK(run_bash("cd " + shell_quote(dir.path) + " && touch ab && export V='a  b*' && " + put) ==
        std::string("a  b*") + '\0' + "-" + '\0');
}

TEST_CASE("shell_arithmetic_of: where bash evaluates a value as arithmetic or a subscript") {
  using ddpctl::shell_arithmetic_of;
  auto at_x = [](const std::string& line) {
    std::vector<bool> a = shell_arithmetic_of(line);
    std::vector<bool> out;
    for (size_t i = 0; i < line.size(); ++i)
      if (line[i] == 'X') out.push_back(a[i]);
    return out;
  };
  // The hostile round's seven, each arithmetic.
  for (const char* line : {"[[ X -gt 0 ]]", "echo $(( X + 1 ))", "(( X ))", "let y=X", "declare -i n=X", "a[X]=1",
                           "for (( i = 0; i < X; i++ )); do :; done", "echo $[X]", "unset 'a[X]'",
                           "local -ri n=X", "arr=([X]=v)", "[[ -n $1 && X -eq 2 ]]"}) {
    INFO(line);
    CHECK(at_x(line) == std::vector<bool>{true});
  }
  // Not arithmetic: words, tests of text, a glob's brackets after a blank.
  for (const char* line : {"echo X", "[[ X == y ]]", "[ X -gt 0 ]", "declare -a v=X", "echo [X]", "let_it=X",
                           "python3 train.py --lr=X", "echo \"X\" > out.txt"}) {
    INFO(line);
    CHECK(at_x(line) == std::vector<bool>{false});
  }
  CHECK(ddpctl::plain_number("12"));
  CHECK(ddpctl::plain_number("-0.5"));
  CHECK_FALSE(ddpctl::plain_number("1e3"));
  CHECK_FALSE(ddpctl::plain_number("a[$(touch M)]"));
  CHECK_FALSE(ddpctl::plain_number("DDPCTL_GRID_Y"));  // a name: its value would be evaluated in turn
  CHECK_FALSE(ddpctl::plain_number(""));
}
