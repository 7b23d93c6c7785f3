// The files of a job are named once (job_files.hpp): the script render
// writes must name each where status, logs and report read it.
#include "catch.hpp"
#include <sstream>

#include "helpers.hpp"
#include "runs/job_files.hpp"
#include "script/render.hpp"
#include "script/resolve.hpp"
#include "spec/cluster.hpp"
#include "spec/spec.hpp"

using namespace ddpctl;

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
