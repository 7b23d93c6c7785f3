// The files of a job are named once (job_files.hpp): the script the job runs
// must write each where status, logs and report read it.
#include "catch.hpp"
#include <sstream>

#include "spec/cluster.hpp"
#include "helpers.hpp"
#include "runs/job_files.hpp"
#include "script/render.hpp"
#include "script/resolve.hpp"
#include "spec/spec.hpp"

using namespace ddpctl;

TEST_CASE("job_files: every name under the log base, as the docs spell them") {
  const std::string base = job_files::log_base("/o/logs", "train", "42");
  CHECK(base == "/o/logs/train_42");
  CHECK(job_files::step_log(base, 2, 3) == "/o/logs/train_42.restart2.3.out");
  CHECK(job_files::progress(base) == "/o/logs/train_42.progress.json");
  CHECK(job_files::metrics(base) == "/o/logs/train_42.metrics.jsonl");
  CHECK(job_files::batch_out(base) == "/o/logs/train_42.out");
  CHECK(job_files::batch_out_pattern("/o/logs") == "/o/logs/%x_%j.out");
  CHECK(job_files::usage(base, "g1") == "/o/logs/train_42.usage.g1.jsonl");
  CHECK(job_files::usage(base, "g1").rfind("/o/logs/" + job_files::usage_prefix("train_42"), 0) == 0);
  CHECK(job_files::stall_record(base) == "/o/logs/train_42.stall.json");
  CHECK(job_files::monitor_off(base, 1) == "/o/logs/train_42.restart1.monitor-off");
  CHECK(job_files::agent_error(base, 1) == "/o/logs/train_42.restart1.agent-error");
  CHECK(job_files::node_check(base, 0, "g2") == "/o/logs/train_42.restart0.check.g2.json");
  CHECK(job_files::provenance(base, 0) == "/o/logs/train_42.restart0.environment.json");
  CHECK(job_files::stacks(base, 0, "g2") == "/o/logs/train_42.restart0.stacks.g2.txt");
  CHECK(job_files::state_dump(base, "g2", 77) == "/o/logs/train_42.state.g2.77.txt");
}

TEST_CASE("job_files: the rendered script writes each file where the readers look") {
  std::string text = "name: train\ncluster: local\nnodes: 1\ngpus_per_node: 0\nprocs_per_node: 1\ntime: '00:05:00'\n"
                     "account: lusu\noutput_dir: /o/logs\ncommand: ['true']\n";
  auto run = resolve_run(parse_run_spec("a.yaml", text),
                         load_cluster_profile(ddpctl::test::source_dir() + "/configs/clusters/local.yaml"));
  auto scripts = render_scripts(run, ddpctl::test::source_dir() + "/templates");
  REQUIRE(scripts.size() == 1);
  // The lines that name the files, run by bash with the job's values.
  std::string names;
  std::istringstream in(scripts[0].text);
  for (std::string line; std::getline(in, line);)
    for (const char* start : {"ddpctl_log_base=", "ddpctl_step_log=", "export DDPCTL_PROGRESS_FILE=", "export DDPCTL_METRICS_FILE="})
      if (line.rfind(start, 0) == 0) names += line + "\n";
  std::string out = ddpctl::test::run_bash("SLURM_JOB_NAME=train SLURM_JOB_ID=42 ddpctl_attempt=1\n" + names +
                                           "printf '%s\\n' \"$ddpctl_log_base\" \"$ddpctl_step_log\" \"$DDPCTL_PROGRESS_FILE\" "
                                           "\"$DDPCTL_METRICS_FILE\"");
  const std::string base = job_files::log_base("/o/logs", "train", "42");
  CHECK(out == base + "\n" + job_files::step_log(base, "1", "%t") + "\n" + job_files::progress(base) + "\n" +
                   job_files::metrics(base) + "\n");
}
