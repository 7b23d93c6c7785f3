// The files of a job are named once (job_files.hpp), each under the log
// base; that the rendered script writes each where the readers look:
// tests/unit/script/test_render_job_files.cpp.
#include "catch.hpp"

#include "runs/job_files.hpp"

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
