// The job script's side of the contract (job_contract.hpp): the rendered
// script's case arms are exactly the table's verdicts and keys, and it
// writes the step marker the agent reads (tests/unit/spec/test_job_contract.cpp
// has each table both ways).
#include "catch.hpp"
#include <map>
#include <regex>
#include <sstream>

#include "base/files.hpp"
#include "helpers.hpp"
#include "script/render.hpp"
#include "script/resolve.hpp"
#include "spec/cluster.hpp"
#include "runs/job_contract.hpp"
#include "spec/spec.hpp"

using namespace ddpctl;

namespace {

// The local-restart example (restart: and requeue:, the node check on by
// default); without restart: the node check's own case.
std::string render_example(bool restart) {
  const std::string root = ddpctl::test::source_dir();
  std::string text = read_file(root + "/configs/local-restart.yaml");
  if (!restart) {
    size_t at = text.find("\nrestart:");
    REQUIRE(at != std::string::npos);
    text.erase(at + 1, text.find('\n', at + 1) - at);
  }
  ResolvedRun run = resolve_run(parse_run_spec("local-restart.yaml", text), load_cluster_profile(root + "/configs/clusters/local.yaml"));
  auto scripts = render_scripts(run, root + "/templates");
  REQUIRE(scripts.size() == 1);
  return scripts[0].text;
}

// Each arm of the script's `case "$<word>" in` ... `esac` (the first such
// case): its pattern and its first line after the pattern; "*" left out.
std::map<std::string, std::string> case_arms(const std::string& script, const std::string& word) {
  std::istringstream in(script);
  std::string line;
  bool inside = false;
  std::map<std::string, std::string> arms;
  const std::regex arm(R"(^\s*([^ ()|*#]+)\)\s*(.*)$)");
  std::string pending;  // an arm whose body starts on the next line
  while (std::getline(in, line)) {
    if (!inside) {
      inside = line.find("case \"$" + word + "\" in") != std::string::npos;
      continue;
    }
    if (line.find("esac") != std::string::npos) break;
    std::smatch m;
    if (!pending.empty()) {
      arms[pending] = line.substr(line.find_first_not_of(' '));
      pending.clear();
    } else if (std::regex_match(line, m, arm)) {
      if (m[2].str().empty()) pending = m[1];
      else arms[m[1]] = m[2];
    }
  }
  REQUIRE(inside);
  return arms;
}

std::string status_of(AgentVerdict v) { return std::to_string(verdict_status(v)); }

}  // namespace

TEST_CASE("contract: the rendered node check reads exactly the table's verdicts", "[job_contract]") {
  std::string script = render_example(false);
  auto arms = case_arms(script, "ddpctl_check_rc");
  REQUIRE(arms.size() == 3);
  CHECK(arms[status_of(AgentVerdict::Go)].rfind("echo \"$ddpctl_checked\"", 0) == 0);
  CHECK(arms[status_of(AgentVerdict::Requeue)].rfind("ddpctl_requeue \"by the node check", 0) == 0);
  CHECK(arms[status_of(AgentVerdict::Fail)].rfind("ddpctl_fail \"the node check failed", 0) == 0);
}

TEST_CASE("contract: the rendered in-job restart reads exactly the table's verdicts and keys", "[job_contract]") {
  std::string script = render_example(true);
  auto check = case_arms(script, "rc");  // ddpctl_node_check, before each step
  REQUIRE(check.size() == 2);
  CHECK(check[status_of(AgentVerdict::Go)].rfind("echo \"$checked\" ; return 0", 0) == 0);
  CHECK(check[status_of(AgentVerdict::Fail)] == "return 1 ;;");

  auto ended = case_arms(script, "ddpctl_restart_rc");
  REQUIRE(ended.size() == 3);
  CHECK(ended[status_of(AgentVerdict::Go)] == "ddpctl_in_job=$((ddpctl_in_job + 1))");
  // A step every task of which stopped for the requeue leaves the loop for
  // the script's own requeue (its arm's first line; the requeue follows it:
  // tests/script/test_restart_in_job_stopped_requeues.sh).
  CHECK(ended[status_of(AgentVerdict::Requeue)].rfind("[ -n \"$ddpctl_stopped\" ] && break", 0) == 0);
  CHECK(ended[status_of(AgentVerdict::Fail)] == "break ;;");

  // Every key step-ended prints is one the script reads, and no other.
  auto keys = case_arms(script, "ddpctl_key");
  std::set<std::string> read, printed;
  for (const auto& [key, body] : keys) read.insert(key);
  for (StepEndedKey k : step_ended_keys()) printed.insert(step_ended_key_text(k));
  CHECK(read == printed);
  CHECK(keys[step_ended_key_text(StepEndedKey::Nodes)].rfind("read -ra ddpctl_nodes", 0) == 0);
  CHECK(keys[step_ended_key_text(StepEndedKey::Exclude)].rfind("ddpctl_exclude=", 0) == 0);
  CHECK(keys[step_ended_key_text(StepEndedKey::Stopped)].rfind("ddpctl_stopped=", 0) == 0);
}

TEST_CASE("contract: the rendered script writes the step marker the agent reads and requeues on the trainer's status", "[job_contract]") {
  std::string script = render_example(true);
  CHECK(script.find(std::string("echo \"") + kStepMarker + "$ddpctl_in_job on ${ddpctl_nodes[*]}\" >&2") != std::string::npos);
  CHECK(kRequeueExit == 75);  // the bundled trainer's (trainer/), which shares no code with ddpctl
  CHECK(script.find("|| [ \"$ddpctl_rc\" -eq " + std::to_string(kRequeueExit) + " ] ||") != std::string::npos);
}
