#include "catch.hpp"

#include "helpers.hpp"
#include "spec/spec.hpp"

using namespace ddpctl;
using ddpctl::test::user_error_of;

namespace {
const char* kMinimal =
    "name: demo\n"
    "cluster: local\n"
    "gpus_per_node: 4\n"
    "time: '01:00:00'\n"
    "trainer: {model: resnet18, epochs: 2}\n";
}

TEST_CASE("a minimal spec loads with its defaults") {
  RunSpec s = parse_run_spec("a.yaml", kMinimal);
  CHECK(s.name == "demo");
  REQUIRE(s.shapes.size() == 1);
  CHECK(s.shapes[0].nodes == 1);
  CHECK(s.shapes[0].gpus_per_node == 4);
  CHECK(s.shapes[0].label == "1x4");
  CHECK(s.shapes[0].time_s == 3600);
  CHECK(s.launch == LaunchMode::PerNode);
  CHECK(s.output_dir == "logs");
  CHECK(s.master.port_min == 20000);
  CHECK(s.master.port_max == 29999);
  CHECK(s.trainer_args == std::vector<std::string>{"--model=resnet18", "--epochs=2"});
}

TEST_CASE("errors name file, line, column and field, all at once") {
  std::string err = user_error_of([] {
    parse_run_spec("runs/a.yaml",
                   "name: demo\n"
                   "cluster: local\n"
                   "gpus_per_node: lots\n"
                   "nodes: 0\n"
                   "time: 25:99:00\n"
                   "mem: 12X\n"
                   "trainer: {model: resnet18}\n");
  });
  CHECK(err.find("runs/a.yaml:3:16: gpus_per_node: 'lots' must be a whole number") != std::string::npos);
  CHECK(err.find("runs/a.yaml:4:8: nodes: '0' must be an integer from 1 to 100000") != std::string::npos);
  CHECK(err.find("runs/a.yaml:5:7: time: '25:99:00' minutes and seconds must be below 60") != std::string::npos);
  CHECK(err.find("runs/a.yaml:6:6: mem: '12X' must be a memory size") != std::string::npos);
}

TEST_CASE("unknown fields get a suggestion, nested ones too") {
  std::string err = user_error_of([] {
    parse_run_spec("a.yaml", std::string(kMinimal) + "gpus_per_nod: 4\nnccl: {socket_ifnam: ib0}\n");
  });
  CHECK(err.find("a.yaml:6:1: unknown field 'gpus_per_nod' (did you mean 'gpus_per_node'?)") != std::string::npos);
  CHECK(err.find("a.yaml:7:8: nccl: unknown field 'socket_ifnam' (did you mean 'socket_ifname'?)") != std::string::npos);
}

TEST_CASE("duplicate keys are refused") {
  std::string err = user_error_of([] { parse_run_spec("a.yaml", std::string(kMinimal) + "nodes: 2\nnodes: 4\n"); });
  CHECK(err.find("a.yaml:7:1: nodes: duplicate key (first set on line 6)") != std::string::npos);
}

TEST_CASE("required fields are reported together") {
  std::string err = user_error_of([] { parse_run_spec("a.yaml", "nodes: 2\n"); });
  CHECK(err.find("name: required field is missing") != std::string::npos);
  CHECK(err.find("cluster: required field is missing") != std::string::npos);
  CHECK(err.find("gpus_per_node: required field is missing") != std::string::npos);
  CHECK(err.find("trainer: required: set trainer:") != std::string::npos);
}

TEST_CASE("env refuses names ddpctl manages") {
  std::string err = user_error_of([] {
    parse_run_spec("a.yaml", std::string(kMinimal) + "env: {MASTER_ADDR: x, SLURM_NTASKS: 2, NCCL_DEBUG: INFO, 9X: 1}\n");
  });
  CHECK(err.find("MASTER_ADDR is set by ddpctl") != std::string::npos);
  CHECK(err.find("SLURM_NTASKS is a Slurm variable") != std::string::npos);
  CHECK(err.find("NCCL_DEBUG is an NCCL setting: put it under nccl:") != std::string::npos);
  CHECK(err.find("'9X' is not a valid variable name") != std::string::npos);
}

TEST_CASE("set overrides any field by dotted path and is blamed by name") {
  RunSpec s = parse_run_spec("a.yaml", kMinimal, {"nodes=2", "trainer.epochs=5", "master.port_range=[21000, 21999]"});
  CHECK(s.shapes[0].nodes == 2);
  CHECK(s.trainer_args[1] == "--epochs=5");
  CHECK(s.master.port_min == 21000);

  std::string err = user_error_of([] { parse_run_spec("a.yaml", kMinimal, {"nodes=many"}); });
  CHECK(err == "--set nodes=many: nodes: 'many' must be a whole number");
  err = user_error_of([] { parse_run_spec("a.yaml", kMinimal, {"nodes"}); });
  CHECK(err.find("expected KEY=VALUE") != std::string::npos);
  err = user_error_of([] { parse_run_spec("a.yaml", kMinimal, {"name.x=1"}); });
  CHECK(err.find("name is not a mapping") != std::string::npos);
}

TEST_CASE("alternatives are full shapes with their own labels") {
  RunSpec s = parse_run_spec("a.yaml", std::string(kMinimal) + "alternatives:\n  - {nodes: 4, gpus_per_node: 1}\n  - {nodes: 2, gpus_per_node: 2, label: two-by-two}\n");
  REQUIRE(s.shapes.size() == 3);
  CHECK(s.shapes[1].label == "4x1");
  CHECK(s.shapes[1].time_s == 3600);  // inherited
  CHECK(s.shapes[2].label == "two-by-two");
  RunSpec o = parse_run_spec("a.yaml", std::string(kMinimal) + "alternatives:\n  - {nodes: 4, gpus_per_node: 1}\n",
                             {"alternatives.0.nodes=2"});
  CHECK(o.shapes[1].nodes == 2);

  std::string err = user_error_of([] {
    parse_run_spec("a.yaml", std::string(kMinimal) + "alternatives:\n  - {gpus_per_node: 4}\n");
  });
  CHECK(err.find("two shapes are both labelled '1x4'") != std::string::npos);
  err = user_error_of([] { parse_run_spec("a.yaml", std::string(kMinimal) + "alternatives:\n  - {nodes: x}\n"); });
  CHECK(err.find("labelled") == std::string::npos);  // no cascade from the bad value
  CHECK(err.find("a.yaml:7:13: alternatives[0].nodes: 'x' must be a whole number") != std::string::npos);
}

TEST_CASE("a sweep's shapes are its entries, the spec's fields their defaults") {
  RunSpec s = parse_run_spec("a.yaml", std::string(kMinimal) +
                                           "sweep:\n  - {gpus_per_node: 1}\n  - {gpus_per_node: 2}\n  - {nodes: 2, gpus_per_node: 1}\n");
  CHECK(s.has_sweep);
  CHECK_FALSE(s.has_alternatives);
  REQUIRE(s.shapes.size() == 3);  // the base 1x4 is not one of them
  CHECK(s.shapes[0].label == "1x1");
  CHECK(s.shapes[2].label == "2x1");
  CHECK(s.shapes[2].time_s == 3600);
  CHECK(s.shapes[1].field_prefix == "sweep[1].");

  std::string err = user_error_of([] {
    parse_run_spec("a.yaml", std::string(kMinimal) + "sweep:\n  - {gpus_per_node: 1}\n  - {gpus_per_node: 1}\n");
  });
  CHECK(err.find("two shapes are both labelled '1x1'; give each sweep entry its own `label`") != std::string::npos);
  err = user_error_of([] {
    parse_run_spec("a.yaml", std::string(kMinimal) + "sweep:\n  - {nodes: 2}\nalternatives:\n  - {nodes: 3}\n");
  });
  CHECK(err.find("a.yaml:7:3: sweep: a spec has either `alternatives:` (one run, raced) or `sweep:`") != std::string::npos);
  err = user_error_of([] { parse_run_spec("a.yaml", std::string(kMinimal) + "sweep: []\n"); });
  CHECK(err.find("sweep: expected a non-empty list of shape overrides") != std::string::npos);
}

TEST_CASE("shape consistency") {
  auto load = [](const std::string& extra) {
    return user_error_of([&] { parse_run_spec("a.yaml", "name: d\ncluster: local\ntrainer: {}\n" + extra); });
  };
  CHECK(load("gpus_per_node: 0\n").find("needs procs_per_node") != std::string::npos);
  CHECK(load("gpus_per_node: 4\nprocs_per_node: 2\n").find("one process per GPU") != std::string::npos);
  CHECK(load("gpus_per_node: 4\ncpus_per_gpu: 2\ncpus_per_task: 8\n").find("not both") != std::string::npos);
  CHECK(load("gpus_per_node: 0\nprocs_per_node: 2\ncpus_per_gpu: 2\n").find("use cpus_per_task") != std::string::npos);
  CHECK(load("gpus_per_node: 1\ncommand: x\n").find("not both") != std::string::npos);
  CHECK(load("gpus_per_node: 1\nlaunch: per-nod\n").find("did you mean 'per-node'") != std::string::npos);
  CHECK(load("gpus_per_node: 1\nmaster: {port_range: [40000, 41000]}\n").find("ephemeral") != std::string::npos);
  CHECK(load("gpus_per_node: 1\nrequeue: {signal: USR3}\n").find("did you mean 'USR1'") != std::string::npos);
}

TEST_CASE("command may be a shell line or an argument list") {
  RunSpec a = parse_run_spec("a.yaml", "name: d\ncluster: local\ngpus_per_node: 1\ncommand: python train.py --lr 0.1\n");
  CHECK(a.command_shell == "python train.py --lr 0.1");
  RunSpec b = parse_run_spec("a.yaml", "name: d\ncluster: local\ngpus_per_node: 1\ncommand: [python, train.py]\n");
  CHECK(b.command_argv == std::vector<std::string>{"python", "train.py"});
}

TEST_CASE("trainer.global_batch becomes --global-batch and must divide into every shape's micro-batches") {
  RunSpec s = parse_run_spec("a.yaml", "name: d\ncluster: local\ngpus_per_node: 4\n"
                                       "trainer: {batch_size: 8, global_batch: 64}\n"
                                       "alternatives:\n  - {nodes: 2}\n");
  CHECK(s.trainer_args == std::vector<std::string>{"--batch-size=8", "--global-batch=64"});
  CHECK(s.trainer_global_batch == 64);

  // 1x4 x 8 = 32 divides 96; 2x4 x 8 = 64 does not: the error names the
  // global_batch line and the shape.
  std::string err = user_error_of([] {
    parse_run_spec("a.yaml", "name: d\ncluster: local\ngpus_per_node: 4\n"
                             "trainer:\n  batch_size: 8\n  global_batch: 96\n"
                             "alternatives:\n  - {nodes: 2}\n");
  });
  CHECK(err.find("a.yaml:6:17: trainer.global_batch: 96 is not a multiple of shape 2x4's 8 ranks x batch_size 8 = 64 "
                 "(ddp-train would refuse it at start, after the queue wait)") != std::string::npos);
  CHECK(err.find("shape 1x4") == std::string::npos);

  // Without batch_size, ddp-train's default of 32 per rank.
  err = user_error_of([] {
    parse_run_spec("a.yaml", "name: d\ncluster: local\ngpus_per_node: 2\ntrainer: {global_batch: 96}\n");
  });
  CHECK(err.find("a.yaml:4:25: trainer.global_batch: 96 is not a multiple of shape 1x2's 2 ranks x batch_size 32 "
                 "(ddp-train's default) = 64") != std::string::npos);

  // Every sweep entry is checked; the accumulation has ddp-train's bound.
  err = user_error_of([] {
    parse_run_spec("a.yaml", "name: d\ncluster: local\ngpus_per_node: 1\ntrainer: {batch_size: 1, global_batch: 2048}\n"
                             "sweep:\n  - {gpus_per_node: 1}\n  - {gpus_per_node: 2}\n  - {gpus_per_node: 3}\n");
  });
  CHECK(err.find("2048 needs 2048 micro-steps of shape 1x1's 1 ranks x batch_size 1 = 1; ddp-train accumulates at "
                 "most 1024") != std::string::npos);
  CHECK(err.find("shape 1x2") == std::string::npos);
  CHECK(err.find("2048 is not a multiple of shape 1x3's 3 ranks x batch_size 1 = 3") != std::string::npos);
}

TEST_CASE("trainer.global_batch and trainer.grad_accum are refused together") {
  std::string err = user_error_of([] {
    parse_run_spec("a.yaml", "name: d\ncluster: local\ngpus_per_node: 1\n"
                             "trainer:\n  grad_accum: 2\n  global_batch: 64\n");
  });
  CHECK(err.find("a.yaml:6:17: trainer.global_batch: set either global_batch (the accumulation follows from each "
                 "shape's world size) or grad_accum, not both") != std::string::npos);
  err = user_error_of([] {
    parse_run_spec("a.yaml", "name: d\ncluster: local\ngpus_per_node: 1\ntrainer: {global_batch: 0}\n");
  });
  CHECK(err.find("trainer.global_batch: '0' must be an integer from 1 to 67108864") != std::string::npos);
}
