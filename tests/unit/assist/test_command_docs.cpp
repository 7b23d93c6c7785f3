// What the CLI says about itself (command_docs.cpp), from a small described
// program: completion candidates for bash's words, and the man pages.
#include "catch.hpp"
#include <filesystem>

#include "assist/command_docs.hpp"
#include "fake_runner.hpp"
#include "base/files.hpp"
#include "helpers.hpp"

using namespace ddpctl;

namespace {

OptionDoc option(std::vector<std::string> names, const std::string& type = "") {
  OptionDoc o;
  o.names = std::move(names);
  o.long_name = o.names.front().substr(2);
  o.type_name = type;
  o.takes_value = !type.empty();
  o.description = "the " + o.long_name;
  return o;
}

ProgramDoc program() {
  ProgramDoc p;
  p.description = "ddpctl: distributed training on Slurm";
  CommandDoc report{"report", "Scaling table of runs", false, {option({"--format"}, "TEXT"), option({"--json"})}};
  OptionDoc targets;
  targets.positional_name = "targets";
  targets.required = true;
  targets.many = true;
  report.options.push_back(targets);
  CommandDoc gen{"gen", "Render the sbatch scripts", false, {option({"--output", "-o"}, "TEXT")}};
  CommandDoc job{"job", "The job agent", true, {}};
  p.commands = {report, gen, job};
  return p;
}

}  // namespace

TEST_CASE("completion: commands, options, values and files from the described program", "[command_docs]") {
  ProgramDoc p = program();
  CHECK(complete(p, {"ddpctl", ""}, 1) == std::vector<std::string>{"report", "gen"});  // hidden ones are not offered
  CHECK(complete(p, {"ddpctl", "re"}, 1) == std::vector<std::string>{"report"});
  CHECK(complete(p, {"ddpctl", "-"}, 1) == std::vector<std::string>{"--help", "--version"});
  CHECK(complete(p, {"ddpctl", "report", "--"}, 2) == std::vector<std::string>{"--format", "--json"});
  CHECK(complete(p, {"ddpctl", "report", "--format", "c"}, 3) == std::vector<std::string>{"csv"});
  CHECK(complete(p, {"ddpctl", "gen", ""}, 2) == std::vector<std::string>{":files:yaml"});
  CHECK(complete(p, {"ddpctl", "gen", "-o", ""}, 3) == std::vector<std::string>{":files:"});
  CHECK(complete(p, {"ddpctl", "nosuch", ""}, 2).empty());
  CHECK(std::string(completion_script("zsh")).rfind("#compdef ddpctl", 0) == 0);
  CHECK(std::string(completion_script("bash")).find("complete -F _ddpctl ddpctl") != std::string::npos);
}

TEST_CASE("man pages: one per public command, dated by SOURCE_DATE_EPOCH", "[command_docs]") {
  test::TempDir dir;
  test::FakeSlurm fake;
  fake.env.vars["SOURCE_DATE_EPOCH"] = "1700000000";  // 2023-11-14
  write_man_pages(program(), dir.path, fake.ctx);
  std::string main = read_file(dir.path + "/ddpctl.1");
  CHECK(main.rfind(".TH DDPCTL 1 2023-11-14 ", 0) == 0);
  CHECK(main.find(".SH NAME\nddpctl \\- distributed training on Slurm\n") != std::string::npos);
  CHECK(main.find("\\fBddpctl-report\\fR(1)\nScaling table of runs\n") != std::string::npos);
  std::string report = read_file(dir.path + "/ddpctl-report.1");
  CHECK(report.find(".SH SYNOPSIS\n\\fBddpctl report\\fR [\\fIOPTIONS\\fR] \\fItargets\\fR...\n") != std::string::npos);
  CHECK(report.find(".TP\n\\fB\\-\\-format\\fR \\fITEXT\\fR\nthe format\n") != std::string::npos);
  CHECK(std::filesystem::exists(dir.path + "/ddpctl-gen.1"));
  CHECK_FALSE(std::filesystem::exists(dir.path + "/ddpctl-job.1"));

  SECTION("without SOURCE_DATE_EPOCH: the clock's day") {
    fake.env.vars.erase("SOURCE_DATE_EPOCH");
    write_man_pages(program(), dir.path, fake.ctx);
    CHECK(read_file(dir.path + "/ddpctl.1").rfind(".TH DDPCTL 1 2026-11-21 ", 0) == 0);  // FakeClock's 1795300000
  }
}
