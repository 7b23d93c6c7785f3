// Rendered scripts: the values a user wrote come back out of bash unchanged.
#include "catch.hpp"
#include <sstream>

#include "spec/cluster.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "script/render.hpp"
#include "script/resolve.hpp"
#include "script/preemption_note.hpp"
#include "spec/spec.hpp"

using namespace ddpctl;
using ddpctl::test::run_bash;

namespace {

ResolvedRun resolve_yaml(const std::string& yaml) {
  std::string text = "name: r\ncluster: local\n" + yaml;
  return resolve_run(parse_run_spec("a.yaml", text),
                     load_cluster_profile(ddpctl::test::source_dir() + "/configs/clusters/local.yaml"));
}

std::string render_one(const ResolvedRun& run) {
  auto scripts = render_scripts(run, ddpctl::test::source_dir() + "/templates");
  REQUIRE(scripts.size() >= 1);
  return scripts[0].text;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<std::string> split_nul(const std::string& s) {
  std::vector<std::string> out;
  for (size_t start = 0; start < s.size();) {
    size_t nul = s.find('\0', start);
    out.push_back(s.substr(start, nul - start));
    start = nul + 1;
  }
  return out;
}

const char* kHostile = "a'b \"c\" $(id) `id` ; & | > < # ! * ? ~ \\ $HOME ünï";
// kHostile inside a single-quoted YAML scalar, where ' is written ''.
const char* kHostileYaml = "a''b \"c\" $(id) `id` ; & | > < # ! * ? ~ \\ $HOME ünï";

}  // namespace

TEST_CASE("exported values read back exactly, however hostile") {
  ResolvedRun run = resolve_yaml(std::string("partition: gpu\ngpus_per_node: 1\ntrainer: {}\nenv:\n  ODD: '") + kHostileYaml +
                            "'\n  EMPTY: ''\n");
  std::string script = render_one(run);
  std::string exports;
  for (const auto& line : lines_of(script))
    if (line.rfind("export ODD=", 0) == 0 || line.rfind("export EMPTY=", 0) == 0) exports += line + "\n";
  std::string out = run_bash(exports + "printf '%s\\0%s\\0' \"$ODD\" \"$EMPTY\"");
  auto values = split_nul(out);
  REQUIRE(values.size() == 2);
  CHECK(values[0] == kHostile);
  CHECK(values[1] == "");
}

TEST_CASE("the launch command reaches the task as exactly the argv the spec says") {
  ResolvedRun run = resolve_yaml(std::string("partition: gpu\ngpus_per_node: 1\ncommand: [python, '") + kHostileYaml +
                            "', --flag=$(id), '']\n");
  std::string script = render_one(run);
  auto lines = lines_of(script);
  auto it = std::find_if(lines.begin(), lines.end(),
                         [](const std::string& l) { return l.find("ddpctl-task \\") != std::string::npos; });
  REQUIRE(it != lines.end());
  std::string words = *(it + 1);
  REQUIRE(words.size() > 2);
  words = words.substr(0, words.size() - 2);  // drop " &"
  auto argv = split_nul(run_bash("printf '%s\\0' " + words));
  CHECK(argv == std::vector<std::string>{"python", kHostile, "--flag=$(id)", ""});
}

TEST_CASE("trainer arguments are quoted whole") {
  ResolvedRun run = resolve_yaml("partition: cpu\ngpus_per_node: 0\nprocs_per_node: 2\ntrainer: {program: ddp-train, data: '/data/my set', lr: 0.1}\n");
  CHECK(launch_argv(run, run.shapes[0]) ==
        std::vector<std::string>{"ddp-train", "--nproc-per-node=2", "--data=/data/my set", "--lr=0.1"});
  CHECK(render_one(run).find("ddp-train --nproc-per-node=2 '--data=/data/my set' --lr=0.1 &") != std::string::npos);
}

TEST_CASE("no #SBATCH line after the first command, and setup is fenced verbatim") {
  ResolvedRun run = resolve_yaml("partition: gpu\ngpus_per_node: 1\ntrainer: {}\nsetup: ['source activate x', 'echo \"$PATH\"']\n");
  std::string script = render_one(run);
  auto lines = lines_of(script);
  CHECK(lines[0] == "#!/bin/bash");
  bool seen_command = false;
  for (const auto& l : lines) {
    if (l.rfind("#SBATCH", 0) == 0) CHECK_FALSE(seen_command);
    else if (!l.empty() && l[0] != '#') seen_command = true;
  }
  auto begin = script.find("# ---- begin user setup");
  auto end = script.find("# ---- end user setup ----");
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  std::string fenced = script.substr(begin, end - begin);
  CHECK(fenced.find("\nsource activate x\necho \"$PATH\"\n") != std::string::npos);
}

TEST_CASE("master discovery: interface, hostname, and loopback refused for multi-node") {
  std::string with_iface = render_one(resolve_yaml("partition: gpu\ngpus_per_node: 1\ntrainer: {}\n"));
  CHECK(with_iface.find("ip -4 -o addr show dev ib0") != std::string::npos);
  std::string by_name =
      render_one(resolve_yaml("partition: gpu\nnodes: 2\ngpus_per_node: 1\ntrainer: {}\nmaster: {interface: none}\n"));
  CHECK(by_name.find("getent ahostsv4") != std::string::npos);
  CHECK(by_name.find("a loopback address the other nodes cannot reach") != std::string::npos);
  std::string single = render_one(resolve_yaml("partition: gpu\ngpus_per_node: 1\ntrainer: {}\nmaster: {interface: none}\n"));
  CHECK(single.find("loopback") == std::string::npos);
}

TEST_CASE("the port comes from the job id inside port_range") {
  std::string script =
      render_one(resolve_yaml("partition: gpu\ngpus_per_node: 1\ntrainer: {}\nmaster: {port_range: 21000-21099}\n"));
  CHECK(script.find("MASTER_PORT=$((21000 + SLURM_JOB_ID % 100))") != std::string::npos);
}

TEST_CASE("a missing or broken template is a clear error") {
  ResolvedRun run = resolve_yaml("partition: gpu\ngpus_per_node: 1\ntrainer: {}\n");
  std::string err = ddpctl::test::user_error_of([&] { render_scripts(run, "/nonexistent"); });
  CHECK(err.find("/nonexistent: templates folder not found") != std::string::npos);
  ddpctl::test::TempDir dir;
  write_file_atomic(dir.path + "/sbatch.sh.mustache", "#!/bin/bash\n{{#requeue}}\n");
  err = ddpctl::test::user_error_of([&] { render_scripts(run, dir.path); });
  CHECK(err.find(dir.path + "/sbatch.sh.mustache: invalid template: Unclosed section") != std::string::npos);
}

TEST_CASE("a race group's scripts claim the group first, plain scripts have no claim") {
  auto run = resolve_yaml(
      "partition: cpu\ngpus_per_node: 0\nprocs_per_node: 1\ncommand: [hostname]\nalternatives:\n  - {nodes: 2}\n");
  auto plain = render_scripts(run, ddpctl::test::source_dir() + "/templates");
  for (const auto& s : plain) CHECK(s.text.find("ddpctl_race") == std::string::npos);
  auto raced = render_scripts(run, ddpctl::test::source_dir() + "/templates", "/runs/r it's/race");
  REQUIRE(raced.size() == 2);
  for (const auto& s : raced) {
    // The path is shell-quoted, and the claim comes before the training step.
    CHECK(s.text.find("ddpctl_race='/runs/r it'\\''s/race'") != std::string::npos);
    size_t claim = s.text.find("elif mkdir \"$ddpctl_claim\"");
    REQUIRE(claim != std::string::npos);
    CHECK(claim < s.text.find("srun "));
    // Without requeue: one generation, no re-race from inside the job.
    CHECK(s.text.find("-lt 1 ] && mkdir \"$ddpctl_race/gen.$ddpctl_next\"") != std::string::npos);
    CHECK(s.text.find("race-again") == std::string::npos);
  }
  CHECK(raced[1].text.find("shape 2x1 (job $SLURM_JOB_ID) started first and won") != std::string::npos);
}

TEST_CASE("a race group with requeue re-races from inside the requeuing job, bounded by max_restarts") {
  auto run = resolve_yaml(
      "partition: cpu\ngpus_per_node: 0\nprocs_per_node: 1\ncommand: [hostname]\n"
      "requeue: {signal: USR1, grace: 60, max_restarts: 2}\nalternatives:\n  - {nodes: 2}\n");
  auto raced = render_scripts(run, ddpctl::test::source_dir() + "/templates", "/runs/r1/race");
  REQUIRE(raced.size() == 2);
  for (const auto& s : raced) {
    // Three generations at most: the submission and two re-races.
    CHECK(s.text.find("-lt 3 ] && mkdir \"$ddpctl_race/gen.$ddpctl_next\"") != std::string::npos);
    size_t again = s.text.find("/ddpctl race-again /runs/r1 --requeuing \"$SLURM_JOB_ID\"");
    REQUIRE(again != std::string::npos);
    // Bounded, so that the requeue still happens before the time limit.
    CHECK(s.text.rfind("timeout 60 ", again) != std::string::npos);
    // The other shapes are submitted before this job requeues itself.
    CHECK(again < s.text.find("scontrol requeue \"$ddpctl_self\""));
  }
}

TEST_CASE("the requeue trap requeues a plain job by its id, an array task as <array>_<task>") {
  std::string script = render_one(resolve_yaml("partition: cpu\ngpus_per_node: 0\nprocs_per_node: 1\ncommand: [hostname]\n"
                                          "requeue: {signal: USR1, grace: 60, max_restarts: 2}\n"));
  size_t begin = script.find("ddpctl_requeue() {");
  REQUIRE(begin != std::string::npos);
  size_t end = script.find("\n}\n", begin);
  REQUIRE(end != std::string::npos);
  // The function as the script defines it, with scontrol faked: what it is asked.
  std::string function = script.substr(begin, end + 3 - begin);
  auto requeued = [&](const std::string& env) {
    return run_bash("scontrol() { echo \"scontrol $*\"; }\nddpctl_attempt=0\n" + env + "\n" + function +
                    "(ddpctl_requeue '') 2>/dev/null");
  };
  CHECK(requeued("SLURM_JOB_ID=42") == "scontrol requeue 42\n");
  // Slurm runs an array's last task under the array's own id (42 here):
  // `scontrol requeue 42` would requeue every task of the array.
  CHECK(requeued("SLURM_JOB_ID=42 SLURM_ARRAY_JOB_ID=42 SLURM_ARRAY_TASK_ID=1") == "scontrol requeue 42_1\n");
  CHECK(requeued("SLURM_JOB_ID=43 SLURM_ARRAY_JOB_ID=42 SLURM_ARRAY_TASK_ID=0") == "scontrol requeue 42_0\n");
}

TEST_CASE("a re-race before a requeue on preemptible capacity gets a third of the grace, elsewhere a minute") {
  ResolvedRun scav = resolve_yaml("partition: scavenger\ngpus_per_node: 0\nprocs_per_node: 1\ncommand: 'true'\n"
                                  "requeue: {grace: 20}\nalternatives:\n  - {partition: cpu, label: normal}\n");
  REQUIRE(scav.shapes.size() == 2);
  CHECK(race_again_limit_s(scav, scav.shapes[0]) == 10);  // scavenger: 30 s grace
  CHECK(race_again_limit_s(scav, scav.shapes[1]) == 60);  // cpu: not preemptible
  auto scripts = render_scripts(scav, ddpctl::test::source_dir() + "/templates", "/runs/r1/race");
  REQUIRE(scripts.size() == 2);
  CHECK(scripts[0].text.find("timeout 10 ") != std::string::npos);
  CHECK(scripts[1].text.find("timeout 60 ") != std::string::npos);
}
