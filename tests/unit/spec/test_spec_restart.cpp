// The run spec's restart: section (spec_restart.hpp): read with its
// defaults and checked field by field, min_nodes against the shape and the
// bundled trainer's global batch, and watchdog.action restart needing it.
// What the agent decides with it: tests/unit/agent/test_in_job_restart.cpp.
#include "catch.hpp"

#include "helpers.hpp"
#include "spec/spec.hpp"

using namespace ddpctl;
using ddpctl::test::user_error_of;

namespace {

const char* kSpec =
    "name: demo\n"
    "cluster: local\n"
    "nodes: 2\n"
    "gpus_per_node: 0\n"
    "procs_per_node: 1\n"
    "time: '01:00:00'\n"
    "command: ./train.sh\n";

std::string spec_error(const std::string& extra) {
  return user_error_of([&] { parse_run_spec("runs/a.yaml", std::string(kSpec) + extra); });
}

}  // namespace

TEST_CASE("restart: is read with its defaults and checked field by field", "[in_job]") {
  RunSpec s = parse_run_spec("a.yaml", std::string(kSpec) + "restart: {in_job: 3, spares: 1}\n");
  REQUIRE(s.restart);
  CHECK(s.restart->in_job == 3);
  CHECK(s.restart->spares == 1);
  CHECK(!s.requeue);  // restart: works without requeue: (the job then fails when restarts are used up)
  RunSpec t = parse_run_spec("a.yaml", std::string(kSpec) + "restart: {in_job: 1}\n");
  CHECK(t.restart->spares == 0);
  CHECK_FALSE(parse_run_spec("a.yaml", kSpec).restart);

  CHECK(spec_error("restart: {in_job: 2, spare: 1}\n").find("runs/a.yaml:8:22: restart: unknown field 'spare' (did you mean 'spares'?)") !=
        std::string::npos);
  CHECK(spec_error("restart: {in_job: -1}\n").find("runs/a.yaml:8:19: restart.in_job:") != std::string::npos);
  CHECK(spec_error("restart: {in_job: 0}\n").find("restart.in_job: '0' must be an integer from 1 to 100") != std::string::npos);
  CHECK(spec_error("restart: {in_job: 2, spares: -1}\n").find("restart.spares:") != std::string::npos);
  CHECK(spec_error("restart: {spares: 1}\n").find("runs/a.yaml:8:10: restart.in_job: required") != std::string::npos);
  CHECK(spec_error("restart: 3\n").find("restart") != std::string::npos);
  CHECK(spec_error("restart: {in_job: 2}\nmonitor: false\n").find("restart: in-job restarts are decided by the job agent") !=
        std::string::npos);
  // A race's shapes and a grid's array tasks restart inside their jobs.
  RunSpec race = parse_run_spec("a.yaml", std::string(kSpec) + "restart: {in_job: 2, min_nodes: 1}\nalternatives: [{nodes: 1}]\n");
  CHECK(race.restart->in_job == 2);
  CHECK(parse_run_spec("a.yaml", std::string(kSpec) + "restart: {in_job: 2}\ngrid: {env.LR: ['0.1', '0.2']}\n").restart);
  // min_nodes is checked on every shape of the race.
  CHECK(spec_error("restart: {in_job: 2, min_nodes: 2}\nalternatives: [{nodes: 1, label: one}]\n")
            .find("restart.min_nodes: 2 is more than the 1 node(s) the step runs on") != std::string::npos);
  // Every problem at once.
  std::string both = spec_error("restart: {in_job: x, spares: y}\n");
  CHECK(both.find("restart.in_job") != std::string::npos);
  CHECK(both.find("restart.spares") != std::string::npos);
}

TEST_CASE("restart.min_nodes: at most the shape's nodes, the bundled trainer resumes and keeps its global batch", "[in_job]") {
  RunSpec s = parse_run_spec("a.yaml", std::string(kSpec) + "restart: {in_job: 2, min_nodes: 1}\n");
  CHECK(s.restart->min_nodes == 1);
  CHECK(parse_run_spec("a.yaml", kSpec).restart == std::nullopt);
  CHECK(spec_error("restart: {in_job: 2, min_nodes: 3}\n")
            .find("runs/a.yaml:8:33: restart.min_nodes: 3 is more than the 2 node(s) the step runs on") != std::string::npos);
  CHECK(spec_error("restart: {in_job: 2, min_nodes: 0}\n").find("restart.min_nodes:") != std::string::npos);

  const std::string trainer =
      "name: demo\ncluster: local\nnodes: 4\ngpus_per_node: 0\nprocs_per_node: 2\ntime: '01:00:00'\n";
  auto trainer_error = [&](const std::string& extra) {
    return user_error_of([&] { parse_run_spec("runs/a.yaml", trainer + extra); });
  };
  // Without resume every restart would train from the first step again.
  CHECK(trainer_error("restart: {in_job: 2}\ntrainer: {model: smallcnn, data: synthetic}\n")
            .find("restart: a restarted step starts ddp-train again from its first step unless it resumes") !=
        std::string::npos);
  const std::string resumes = "trainer: {model: smallcnn, data: synthetic, resume: true, checkpoint_dir: ck, batch_size: 8";
  CHECK(trainer_error("restart: {in_job: 2, min_nodes: 2}\n" + resumes + "}\n")
            .find("restart.min_nodes: a step shrunk to 2 node(s) would train ddp-train with a smaller global batch") !=
        std::string::npos);
  // 64 = 4 nodes x 2 ranks x 8 x 1 micro-step; on 3 nodes, 48 does not divide 64.
  CHECK(trainer_error("restart: {in_job: 2, min_nodes: 2}\n" + resumes + ", global_batch: 64}\n")
            .find("restart.min_nodes: a step shrunk to 3 node(s) (6 ranks x batch_size 8 = 48) cannot keep "
                  "trainer.global_batch 64: not a multiple") != std::string::npos);
  // 192 = 8, 6 and 4 ranks x 8 x 3, 4 and 6 micro-steps.
  RunSpec ok = parse_run_spec("a.yaml", trainer + "restart: {in_job: 2, min_nodes: 2}\n" + resumes + ", global_batch: 192}\n");
  CHECK(ok.restart->min_nodes == 2);
}

TEST_CASE("watchdog.action restart needs restart:, and exclude_slow works with it", "[in_job]") {
  CHECK(spec_error("watchdog: {stall_after: 60s, action: restart}\n")
            .find("watchdog.action: restart starts the stalled step again inside the job, which needs a restart: section") !=
        std::string::npos);
  RunSpec s = parse_run_spec("a.yaml", std::string(kSpec) + "restart: {in_job: 2, spares: 1}\n"
                                                            "watchdog: {stall_after: 60s, action: restart, exclude_slow: true}\n");
  CHECK(s.watchdog.action == "restart");
  CHECK(s.watchdog.exclude_slow);
}
