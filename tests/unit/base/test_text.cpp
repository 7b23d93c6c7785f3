#include "catch.hpp"

#include "base/text.hpp"

using namespace ddpctl;

TEST_CASE("find_invalid_utf8 accepts UTF-8 and finds the first bad byte") {
  CHECK_FALSE(find_invalid_utf8("plain ascii"));
  CHECK_FALSE(find_invalid_utf8("ünïcödé 日本語 🚀"));
  CHECK(find_invalid_utf8("ab\xff") == 2u);
  CHECK(find_invalid_utf8("\xc0\xaf") == 0u);          // overlong '/'
  CHECK(find_invalid_utf8("a\xed\xa0\x80") == 1u);     // surrogate
  CHECK(find_invalid_utf8("\xf4\x90\x80\x80") == 0u);  // above U+10FFFF
  CHECK(find_invalid_utf8("\xe6\x97") == 0u);          // truncated
}

TEST_CASE("find_control_char finds C0, DEL and C1 characters") {
  CHECK_FALSE(find_control_char("a b"));
  CHECK(find_control_char("a\nb") == 1u);
  CHECK(find_control_char("\x7f") == 0u);
  CHECK(find_control_char("x\xc2\x85") == 1u);  // U+0085 NEXT LINE
  CHECK(find_control_char("a\tb") == 1u);
  CHECK_FALSE(find_control_char("a\tb", /*allow_tab=*/true));
}

TEST_CASE("script_value_problem explains what is wrong") {
  CHECK_FALSE(script_value_problem("fine value"));
  CHECK(script_value_problem("a\nb")->find("newline") != std::string::npos);
  CHECK(script_value_problem("a\rb")->find("carriage return") != std::string::npos);
  CHECK(script_value_problem("\xff")->find("UTF-8") != std::string::npos);
}

TEST_CASE("closest_match suggests near typos only") {
  std::vector<std::string> fields = {"gpus_per_node", "nodes", "partition", "account", "cpus_per_gpu"};
  CHECK(closest_match("gpus_per_nod", fields) == "gpus_per_node");
  CHECK(closest_match("partiton", fields) == "partition");
  CHECK(closest_match("acount", fields) == "account");
  CHECK_FALSE(closest_match("banana", fields));
  CHECK(did_you_mean("node", fields) == " (did you mean 'nodes'?)");
  CHECK(did_you_mean("zzz", fields).empty());
  CHECK(closest_match("gne", {"gen", "status"}) == "gen");  // a transposition is one edit
}

TEST_CASE("printable escapes what a terminal would act on") {
  CHECK(printable("ok") == "'ok'");
  CHECK(printable("a\nb\x1b[2J") == "'a\\nb\\u{001b}[2J'");
  CHECK(printable("ünï 日本") == "'ünï 日本'");
  CHECK(printable("bad\xff") == "'bad\\xff'");
  CHECK(printable(std::string(100, 'x'), 10) == "'xxxxxxxxxx...'");
}

TEST_CASE("hostlists expand as Slurm writes them") {
  CHECK(expand_hostlist("g[1-3],a1") == std::vector<std::string>{"g1", "g2", "g3", "a1"});
  CHECK(expand_hostlist("g[01-03]") == std::vector<std::string>{"g01", "g02", "g03"});
  CHECK(expand_hostlist("n[1,4-5]x") == std::vector<std::string>{"n1x", "n4x", "n5x"});
  CHECK(expand_hostlist("login") == std::vector<std::string>{"login"});
  CHECK(expand_hostlist("").empty());
  CHECK(expand_hostlist("g[5-3]").empty());
  CHECK(expand_hostlist("g[1-99999999999]").size() <= 100000);  // a hostile range is bounded
}

TEST_CASE("one duration formatter, three styles") {
  CHECK(format_duration(0) == "0s");
  CHECK(format_duration(12) == "12s");
  CHECK(format_duration(340) == "5m40s");
  CHECK(format_duration(3720) == "1h02m");
  CHECK(format_duration(2 * 86400 + 3 * 3600 + 59) == "2d03h");
  CHECK(format_duration(-5) == "0s");
  CHECK(format_duration(1.49, DurationStyle::Tenths) == "1.5s");
  CHECK(format_duration(59.96, DurationStyle::Tenths) == "1m00s");
  CHECK(format_duration(3000, DurationStyle::Tenths) == "50m00s");
  CHECK(format_duration(5 * 3600, DurationStyle::Compact) == "5h");
  CHECK(format_duration(90 * 60, DurationStyle::Compact) == "1h30m");
  CHECK(format_duration(59 * 60, DurationStyle::Compact) == "59m");
  CHECK(format_duration(86400, DurationStyle::Compact) == "1d");
}

TEST_CASE("one byte formatter: B, KiB with a decimal, MiB whole from 10 MiB, GiB") {
  CHECK(format_bytes(512) == "512 B");
  CHECK(format_bytes(1536) == "1.5 KiB");
  CHECK(format_bytes(3 << 20) == "3.0 MiB");
  CHECK(format_bytes(683LL << 20) == "683 MiB");
  CHECK(format_bytes(5LL << 30) == "5.0 GiB");
}

TEST_CASE("meminfo_kib reads one key of /proc/meminfo, and only that key") {
  const std::string m = "MemTotal:       16384000 kB\nMemFree:  100 kB\nMemAvailable:    8192000 kB\nSwapTotal: 0 kB\n";
  CHECK(meminfo_kib(m, "MemTotal") == 16384000);
  CHECK(meminfo_kib(m, "MemAvailable") == 8192000);
  CHECK(meminfo_kib(m, "Mem") == std::nullopt);  // a prefix of a key is not the key
  CHECK(meminfo_kib(m, "Cached") == std::nullopt);
  CHECK(meminfo_kib("MemAvailable: x kB\n", "MemAvailable") == std::nullopt);
  CHECK(meminfo_kib("MemAvailable: 99999999999999999999 kB", "MemAvailable") == std::nullopt);
}

TEST_CASE("the small string helpers every folder shares") {
  CHECK(contains("Socket timed out on send/recv", "timed out"));
  CHECK_FALSE(contains("", "x"));
  CHECK(contains(std::vector<std::string>{"--exclusive", "--requeue"}, "--requeue"));
  CHECK_FALSE(contains(std::vector<std::string>{"--requeue"}, "--requeu"));
  CHECK(ends_with("torch/autograd/graph.py", "graph.py"));
  CHECK_FALSE(ends_with("py", "graph.py"));
  CHECK(lower("GPU A100-80GB") == "gpu a100-80gb");
  CHECK(upper("lr=0.1") == "LR=0.1");
  CHECK(file_name_of("/usr/lib/python3/dist-packages/torch/nn/modules/module.py") == "module.py");
  CHECK(file_name_of("train.py") == "train.py");
  CHECK(file_name_of("logs/") == "");
}

TEST_CASE("plain_line: C1 controls (U+009B, a terminal's CSI) and bytes that are not UTF-8 become '?'") {
  CHECK(ddpctl::plain_line("ddpctl 1.0\xc2\x9b" "2J") == "ddpctl 1.0?2J");
  CHECK(ddpctl::plain_line("a\x1b[2Jb") == "a?[2Jb");
  CHECK(ddpctl::plain_line("caf\xc3\xa9 \xe2\x9c\x93") == "caf\xc3\xa9 \xe2\x9c\x93");  // whole characters pass
  CHECK(ddpctl::plain_line("x\xff\x9by") == "x??y");
  CHECK(ddpctl::plain_line("\xc3") == "?");
}
