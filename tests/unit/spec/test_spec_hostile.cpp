// Hostile input: each gets a clear error, or is accepted only where the value
// is quoted on its way into the script (see test_render_script.cpp).
#include "catch.hpp"

#include "helpers.hpp"
#include "spec/spec.hpp"

using namespace ddpctl;
using ddpctl::test::user_error_of;

namespace {
const std::string kHostileBase = "name: demo\ncluster: local\ngpus_per_node: 1\ntime: 10\ntrainer: {model: smallcnn}\n";

std::string error_for(const std::string& text) {
  return user_error_of([&] { parse_run_spec("h.yaml", text); });
}

// kHostileBase with its name replaced when the case sets one (a second `name:` would
// only be a duplicate key).
std::string with_case(const std::string& yaml) {
  if (yaml.rfind("name:", 0) == 0) return kHostileBase.substr(kHostileBase.find('\n') + 1) + yaml;
  return kHostileBase + yaml;
}
}  // namespace

TEST_CASE("shell metacharacters in Slurm fields are refused") {
  struct Case {
    const char* yaml;
    const char* expect;
  } cases[] = {
      {"name: \"$(rm -rf ~)\"\n", "h.yaml:5:7: name: '$(rm -rf ~)' must be a Slurm name"},
      {"partition: \"`id`\"\n", "partition: '`id`' must be a Slurm name"},
      {"account: \"a'b\"\n", "account: 'a'b' must be a Slurm name"},
      {"qos: \"normal # x\"\n", "qos: 'normal # x' must be a Slurm name"},
      {"constraint: \"a100;reboot\"\n", "constraint: 'a100;reboot' must be a Slurm feature expression"},
      {"account: -A\n", "account: '-A' must be a Slurm name"},
      {"name: \"x --wrap=id\"\n", "name: 'x --wrap=id' must be a Slurm name"},
      {"gpu_type: \"a100 --wrap=id\"\n", "gpu_type: 'a100 --wrap=id' must be a Slurm name"},
      {"output_dir: \"logs; rm -rf /\"\n", "output_dir: 'logs; rm -rf /' must be a path"},
      {"output_dir: \"~/logs\"\n", "output_dir: '~/logs' starts with '~'"},
      {"output_dir: \"logs/%u\"\n", "contains '%'"},
      {"modules: [\"cuda; id\"]\n", "modules[0]: 'cuda; id' must be a module name"},
      {"modules: [\"--force\"]\n", "modules[0]: '--force' must be a module name"},
      {"master: {interface: \"ib0; id\"}\n", "master.interface: 'ib0; id' must be a network interface name"},
      {"env: {\"A;B\": 1}\n", "'A;B' is not a valid variable name"},
      {"nccl: {socket_ifname: \"ib0 $(id)\"}\n", "nccl.socket_ifname: 'ib0 $(id)' must be interface names"},
  };
  for (const auto& c : cases) {
    INFO(c.yaml);
    std::string err = error_for(with_case(c.yaml));
    CHECK(err.find(c.expect) != std::string::npos);
  }
}

TEST_CASE("control characters never reach a script") {
  CHECK(error_for(kHostileBase + "env: {A: \"x\\ny\"}\n").find("env.A: contains a newline") != std::string::npos);
  CHECK(error_for(kHostileBase + "env: {A: \"x\\ry\"}\n").find("carriage return") != std::string::npos);
  CHECK(error_for(kHostileBase + "env: {A: \"x\\0y\"}\n").find("control character") != std::string::npos);
  CHECK(error_for(kHostileBase + "env: {A: \"x\\u0085y\"}\n").find("control character") != std::string::npos);
  CHECK(error_for(kHostileBase + "setup: [\"ok\\nid\"]\n").find("setup[0]: contains a newline") != std::string::npos);
  CHECK(error_for(kHostileBase + "setup:\n  - |\n    line one\n    line two\n").find("setup[0]: contains a newline") !=
        std::string::npos);
  CHECK(error_for("name: demo\ncluster: local\ngpus_per_node: 1\ntime: 10\ntrainer: {data: \"a\\tb\"}\n")
            .find("trainer.data: contains a tab") != std::string::npos);
}

TEST_CASE("files that are not one UTF-8 YAML mapping") {
  CHECK(error_for("") == "h.yaml: run spec is empty: expected a mapping of fields");
  CHECK(error_for("# only a comment\n") == "h.yaml: run spec is empty: expected a mapping of fields");
  CHECK(error_for(kHostileBase + "---\nname: other\n").find("h.yaml:7:1: run spec holds 2 YAML documents") != std::string::npos);
  CHECK(error_for("- a\n- b\n").find("run spec must be a mapping of fields, not a list") != std::string::npos);
  CHECK(error_for("just text\n").find("not the value 'just text'") != std::string::npos);
  CHECK(error_for("name: demo\nenv:\n\tA: 1\n").find("this line contains a tab") != std::string::npos);
  CHECK(error_for("name: \"d\xff\"\n").find("h.yaml:1:9: run spec is not valid UTF-8 here") != std::string::npos);
  CHECK(error_for("\xff\xfen\0a\0").find("UTF-16") != std::string::npos);
  CHECK(error_for("name: [unclosed\n").find("YAML syntax error") != std::string::npos);
}

TEST_CASE("a UTF-8 byte-order mark is accepted") {
  RunSpec s = parse_run_spec("h.yaml", "\xef\xbb\xbf" + kHostileBase);
  CHECK(s.name == "demo");
}

TEST_CASE("huge numbers and deep nesting get errors, not crashes") {
  CHECK(error_for(kHostileBase + "nodes: 99999999999999999999999999\n").find("must be") != std::string::npos);
  CHECK(error_for(kHostileBase + "nodes: -1\n").find("must be an integer from 1") != std::string::npos);
  CHECK(error_for(kHostileBase + "nodes: 1e9\n").find("must be a whole number") != std::string::npos);
  std::string deep = kHostileBase + "env: " + std::string(5000, '[') + std::string(5000, ']') + "\n";
  CHECK(error_for(deep).find("nesting is too deep") != std::string::npos);
  std::string deep_ok_yaml = kHostileBase + "env: " + std::string(50, '[') + std::string(50, ']') + "\n";
  CHECK(error_for(deep_ok_yaml).find("env: expected a mapping of fields, got a list") != std::string::npos);
}

TEST_CASE("an alias bomb is read in bounded time") {
  // A billion laughs: 9^9 strings if expanded. Schema-driven reading never
  // walks into it.
  std::string bomb = "a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    bomb += std::string(1, c) + ": &" + c + " [";
    for (int k = 0; k < 9; ++k) bomb += std::string(k ? ",*" : "*") + static_cast<char>(c - 1);
    bomb += "]\n";
  }
  std::string err = error_for(kHostileBase + bomb + "setup: *i\nenv: *i\n");
  CHECK(err.find("unknown field 'a'") != std::string::npos);
  CHECK(err.find("setup[0]: expected a single value, got a list") != std::string::npos);
  CHECK(err.find("env: expected a mapping of fields, got a list") != std::string::npos);
}

TEST_CASE("non-scalar keys and mapping values where a value belongs") {
  CHECK(error_for(kHostileBase + "? [a, b]\n: 1\n").find("keys must be plain names") != std::string::npos);
  CHECK(error_for(kHostileBase + "setup:\n  - echo a: b\n").find("an unquoted ': ' starts a mapping") != std::string::npos);
}

TEST_CASE("values ddp-train or the job would refuse only after the queue wait are refused at load") {
  struct Case {
    const char* yaml;
    const char* expect;
  } cases[] = {
      {"trainer: {lr: 1e309}\n", "h.yaml:5:15: trainer.lr: '1e309' is out of range: ddp-train takes a finite number above 0"},
      {"trainer: {lr: -5}\n", "trainer.lr: '-5' is out of range: ddp-train takes a finite number above 0 (at most 1000000)"},
      {"trainer: {lr: 0}\n", "trainer.lr: '0' is out of range: ddp-train takes a finite number above 0"},
      {"trainer: {lr: nan}\n", "trainer.lr: 'nan' is out of range: ddp-train takes a finite number above 0"},
      {"trainer: {momentum: 1e999}\n", "trainer.momentum: '1e999' is out of range: ddp-train takes a finite number from 0 to 1"},
      {"trainer: {momentum: 1.5}\n", "trainer.momentum: '1.5' is out of range: ddp-train takes a finite number from 0 to 1"},
      {"trainer: {weight_decay: -0.1}\n", "trainer.weight_decay: '-0.1' is out of range: ddp-train takes a finite number from 0 to 1"},
      {"trainer: {lr: fast}\n", "trainer.lr: 'fast' must be a number such as 0.1 or 1e-4"},
      {"trainer: {epochs: 0}\n", "trainer.epochs:"},
      {"env: {PATH: /nonexistent}\n",
       "h.yaml:5:13: env.PATH: '/nonexistent' would replace PATH wholesale, and the job's own commands (srun, "
       "scontrol) or the site's libraries would not be found; write '/nonexistent:$PATH' to put it first (or "
       "'$PATH:/nonexistent' last)"},
      {"env: {LD_LIBRARY_PATH: /opt/lib}\n", "env.LD_LIBRARY_PATH: '/opt/lib' would replace LD_LIBRARY_PATH wholesale"},
      {"env: {PATH: \"\"}\n", "env.PATH: '' would replace PATH wholesale"},
  };
  for (const auto& c : cases) {
    INFO(c.yaml);
    std::string err = error_for(kHostileBase.substr(0, kHostileBase.find("trainer:")) + c.yaml +
                                (std::string(c.yaml).rfind("trainer:", 0) == 0 ? "" : "trainer: {model: smallcnn}\n"));
    CHECK(err.find(c.expect) != std::string::npos);
  }
}

TEST_CASE("prepending to PATH and LD_LIBRARY_PATH is accepted") {
  RunSpec s = parse_run_spec("h.yaml", kHostileBase + "env: {PATH: \"/opt/x/bin:$PATH\", LD_LIBRARY_PATH: \"${LD_LIBRARY_PATH}:/opt/lib\"}\n");
  REQUIRE(s.env.size() == 2);
  CHECK(s.env[0].second == "/opt/x/bin:$PATH");
  // The bounds at their edges are accepted: ddp-train takes them too.
  parse_run_spec("h.yaml", "name: d\ncluster: local\ngpus_per_node: 1\ntrainer: {lr: 1e6, momentum: 1, weight_decay: 0}\n");
}

TEST_CASE("a value over Linux's 128 KiB limit for one argument is refused with the limit named") {
  std::string big(1 << 20, 'x');
  std::string err = error_for(kHostileBase + "env: {BIG: " + big + "}\n");
  CHECK(err.find("env.BIG: is 1048576 bytes; Linux passes at most 128 KiB (131071 bytes) in one argument or environment variable, and every command of the job would fail with \"Argument list too long\"") !=
        std::string::npos);
  err = error_for("name: demo\ncluster: local\ngpus_per_node: 1\ncommand: [prog, " + big + "]\n");
  CHECK(err.find("command[1]: is 1048576 bytes") != std::string::npos);
  // Just under the limit is fine; NAME=value counts whole.
  parse_run_spec("h.yaml", kHostileBase + "env: {BIG: " + std::string(100000, 'x') + "}\n");
  err = error_for(kHostileBase + "env: {BIG: " + std::string(131068, 'x') + "}\n");
  CHECK(err.find("env.BIG: BIG=... is 131072 bytes with its name") != std::string::npos);
}

TEST_CASE("a key over YAML's 1,024-character limit is named, with its field and the limit") {
  // yaml-cpp said only "end of map flow not found" (flow) or "illegal map value" (block).
  std::string key(10000, 'k');
  std::string err = error_for(kHostileBase + "sbatch: {" + key + ": 1}\n");
  CHECK_THAT(err, Catch::StartsWith("h.yaml:6:10: sbatch: a key of 10000 characters ('kkkkkkkkkkkkkkkkkkkkkkkkkkkkkk...'): "
                                    "YAML reads keys of at most 1024 characters"));
  err = error_for(kHostileBase + "sbatch:\n  gpu-bind: closest\n  " + key + ": 1\n");
  CHECK_THAT(err, Catch::StartsWith("h.yaml:8:3: sbatch: a key of 10000 characters"));
  err = error_for(kHostileBase + key + ": 1\n");
  CHECK_THAT(err, Catch::StartsWith("h.yaml:6:1: a key of 10000 characters"));
  // 1,024 is still a key (an unknown one here).
  CHECK_THAT(error_for(kHostileBase + "sbatch: {" + std::string(1024, 'k') + ": 1}\n"), !Catch::Contains("a key of"));
  // Other syntax errors are yaml-cpp's, as before.
  CHECK_THAT(error_for(kHostileBase + "env: {A: [1}\n"), Catch::Contains("YAML syntax error"));
}

TEST_CASE("a watchdog span gen accepts is one the job's agent accepts") {
  // 2778h was accepted here and rendered as --stall-after 10000800s, which
  // the agent refused in the job ('10000800s' is not a duration): no watchdog.
  std::string err = error_for(kHostileBase + "watchdog: {stall_after: 2778h}\n");
  CHECK_THAT(err, Catch::Contains("h.yaml:6:25: watchdog.stall_after: '2778h' is longer than 10000000s (115 days)"));
  RunSpec s = parse_run_spec("h.yaml", kHostileBase + "watchdog: {stall_after: 2777h}\n");
  CHECK(s.watchdog.stall_after_s == 2777 * 3600);
}
