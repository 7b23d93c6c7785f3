// Where the job agent runs (job_place.cpp), from Slurm's variables.
#include "catch.hpp"

#include "agent/job_place.hpp"
#include "fake_runner.hpp"
#include "helpers.hpp"

using namespace ddpctl;
using test::FakeEnvironment;

TEST_CASE("job_place: scontrol and scancel act on a job by its id, on an array task as <array>_<task>", "[job_agent]") {
  FakeEnvironment env;
  env.vars = {{"SLURM_JOB_ID", "42"}, {"SLURM_RESTART_COUNT", "1"}};
  CHECK(job_place(env).slurm_id == "42");
  // The array's last task runs under the array's own id: `scontrol requeue
  // 42` would requeue every task of array 42 (Slurm 22.05, seen).
  env.vars["SLURM_ARRAY_JOB_ID"] = "42";
  env.vars["SLURM_ARRAY_TASK_ID"] = "1";
  JobPlace p = job_place(env);
  CHECK(p.job_id == "42");  // its logs and processes are still the job's own
  CHECK(p.slurm_id == "42_1");
  env.vars["SLURM_JOB_ID"] = "43";
  env.vars["SLURM_ARRAY_TASK_ID"] = "0";
  CHECK(job_place(env).slurm_id == "42_0");
}
