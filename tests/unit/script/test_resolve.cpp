// Checks against the cluster profile, and each GPU request dialect.
#include "catch.hpp"

#include <filesystem>

#include "spec/cluster.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "script/resolve.hpp"
#include "spec/spec.hpp"

using namespace ddpctl;
using ddpctl::test::user_error_of;

namespace {

ClusterProfile profile(const std::string& name) {
  return load_cluster_profile(ddpctl::test::source_dir() + "/configs/clusters/" + name + ".yaml");
}

ResolvedRun resolve_on(const std::string& cluster, const std::string& yaml, const std::vector<std::string>& sets = {}) {
  std::string text = "name: r\ncluster: " + cluster + "\ntrainer: {model: resnet50}\n" + yaml;
  return resolve_run(parse_run_spec("runs/a.yaml", text, sets), profile(cluster));
}

bool has_word(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

TEST_CASE("every bundled profile loads") {
  for (const char* name : {"local", "gilbreth", "ibex", "raven", "usc"}) {
    INFO(name);
    CHECK_NOTHROW(profile(name));
  }
}

TEST_CASE("too many GPUs for the partition: the documented message") {
  std::string err = user_error_of([] {
    resolve_on("gilbreth", "gpu_type: a100-80gb\nnodes: 1\ngpus_per_node: 8\ntime: 1:00:00\n");
  });
  CHECK(err.find("runs/a.yaml:6:16: gpus_per_node: 8 exceeds the 4 GPUs per node of partition a100-80gb (cluster "
                 "gilbreth)") != std::string::npos);
}

TEST_CASE("unknown GPU type and partition get suggestions") {
  std::string err = user_error_of([] { resolve_on("gilbreth", "gpu_type: a100-80g\ngpus_per_node: 1\ntime: 60\n"); });
  CHECK(err.find("gpu_type: 'a100-80g' is not a GPU type of cluster gilbreth (did you mean 'a100-80gb'?)") !=
        std::string::npos);
  err = user_error_of([] { resolve_on("local", "partition: gpus\ngpus_per_node: 1\n"); });
  CHECK(err.find("partition: 'gpus' is not a partition of cluster local (did you mean 'gpu'?)") != std::string::npos);
  err = user_error_of([] { resolve_on("local", "partition: cpu\ngpus_per_node: 1\n"); });
  CHECK(err.find("partition cpu has no GPUs") != std::string::npos);
}

TEST_CASE("node, memory, time and CPU limits") {
  std::string err = user_error_of([] {
    resolve_on("local", "partition: gpu\nnodes: 5\ngpus_per_node: 1\nmem: 4G\ntime: '03:00:00'\ncpus_per_gpu: 4\n");
  });
  CHECK(err.find("nodes: 5 exceeds the 4 nodes of partition gpu") != std::string::npos);
  CHECK(err.find("mem: 4G exceeds the 2G per node of partition gpu") != std::string::npos);
  CHECK(err.find("time: 03:00:00 exceeds the 02:00:00 time limit of partition gpu") != std::string::npos);
  CHECK(err.find("cpus_per_gpu: 4 CPUs per node (1 task(s) x 4) exceed the 2 CPUs per node of partition gpu") !=
        std::string::npos);
}

TEST_CASE("restart.spares: the job asks for its nodes and spares, with --no-kill, within the partition") {
  // ddp-train resumes on a restart (check_restart).
  const std::vector<std::string> resumes = {"trainer.resume=true", "trainer.checkpoint_dir=ck"};
  ResolvedRun run = resolve_on("local", "partition: gpu\nnodes: 2\ngpus_per_node: 1\ntime: '01:00:00'\n"
                                     "restart: {in_job: 2, spares: 1}\n", resumes);
  CHECK(run.shapes[0].nodes == 2);
  CHECK(run.shapes[0].spares == 1);
  CHECK(has_word(run.shapes[0].directives, "--nodes=3"));
  CHECK(has_word(run.shapes[0].directives, "--no-kill"));
  std::string err = user_error_of([&] {
    resolve_on("local", "partition: gpu\nnodes: 4\ngpus_per_node: 1\ntime: '01:00:00'\nrestart: {in_job: 2, spares: 1}\n", resumes);
  });
  CHECK(err.find("runs/a.yaml:8:10: restart.spares: 4 node(s) and 1 spare(s) exceed the 4 nodes of partition gpu") !=
        std::string::npos);
}

TEST_CASE("a partition-dialect type in another partition is a conflict") {
  std::string err = user_error_of([] {
    resolve_on("gilbreth", "gpu_type: a100-80gb\npartition: v100\ngpus_per_node: 1\ntime: 60\n");
  });
  CHECK(err.find("partition: is v100, but GPU type a100-80gb lives in partition a100-80gb") != std::string::npos);
}

TEST_CASE("time falls back to the profile's default, a missing one is an error") {
  ResolvedRun r = resolve_on("local", "partition: gpu\ngpus_per_node: 1\n");
  CHECK(r.shapes[0].time_s == 30 * 60);
  ClusterProfile p = profile("local");
  p.default_time_s.reset();
  std::string err = user_error_of([&] {
    resolve_run(parse_run_spec("a.yaml", "name: r\ncluster: local\ngpus_per_node: 1\npartition: gpu\ntrainer: {}\n"), p);
  });
  CHECK(err.find("time: required field is missing") != std::string::npos);
}

TEST_CASE("GPU request dialects") {
  SECTION("gres") {
    auto r = resolve_on("raven", "gpu_type: a100\nnodes: 2\ngpus_per_node: 4\ntime: 60\n");
    CHECK(has_word(r.shapes[0].directives, "--gres=gpu:a100:4"));
    CHECK(has_word(r.shapes[0].directives, "--cpus-per-task=72"));  // 18 per GPU, one launcher task per node
    CHECK_FALSE(has_word(r.shapes[0].directives, "--partition=gpu"));  // implicit partition
  }
  SECTION("gpus-per-node") {
    auto r = resolve_on("usc", "gpu_type: a40\ngpus_per_node: 2\n");
    CHECK(has_word(r.shapes[0].directives, "--gpus-per-node=a40:2"));
    CHECK(has_word(r.shapes[0].directives, "--partition=gpu"));
  }
  SECTION("constraint") {
    auto r = resolve_on("ibex", "gpu_type: v100\ngpus_per_node: 8\nconstraint: 'ib|roce'\n");
    CHECK(has_word(r.shapes[0].directives, "--gres=gpu:8"));
    CHECK(has_word(r.shapes[0].directives, "--constraint=v100&(ib|roce)"));
  }
  SECTION("partition") {
    auto r = resolve_on("gilbreth", "gpu_type: a100-80gb\ngpus_per_node: 4\n");
    CHECK(has_word(r.shapes[0].directives, "--partition=a100-80gb"));
    CHECK(has_word(r.shapes[0].directives, "--gres=gpu:4"));
  }
  SECTION("per-gpu launch asks for one task per GPU") {
    auto r = resolve_on("raven", "gpu_type: a100\ngpus_per_node: 4\nlaunch: per-gpu\n");
    CHECK(has_word(r.shapes[0].directives, "--ntasks-per-node=4"));
    CHECK(has_word(r.shapes[0].directives, "--cpus-per-task=18"));
  }
}

TEST_CASE("requeue adds --requeue and a batch-shell signal") {
  auto r = resolve_on("local", "partition: gpu\ngpus_per_node: 1\ntime: 60\nrequeue: {signal: SIGUSR2, grace: 120}\n");
  CHECK(has_word(r.shapes[0].directives, "--requeue"));
  CHECK(has_word(r.shapes[0].directives, "--signal=B:USR2@120"));
  std::string err = user_error_of([] {
    resolve_on("local", "partition: gpu\ngpus_per_node: 1\ntime: 2\nrequeue: {grace: 120}\n");
  });
  CHECK(err.find("requeue.grace: 120 s is not shorter than the time limit 00:02:00") != std::string::npos);
}

TEST_CASE("NCCL settings: the spec overrides the profile, both torch names exported") {
  auto r = resolve_on("gilbreth", "gpu_type: a100-80gb\ngpus_per_node: 4\nnccl: {ib_hca: mlx5_1, debug: INFO}\n");
  EnvList want = {{"NCCL_SOCKET_IFNAME", "ib0"},
                  {"NCCL_IB_HCA", "mlx5_1"},
                  {"NCCL_DEBUG", "INFO"},
                  {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"},
                  {"NCCL_ASYNC_ERROR_HANDLING", "1"}};
  CHECK(r.nccl_env == want);
  CHECK(r.master_interface == "ib0");
  auto none = resolve_on("gilbreth", "gpu_type: a100-80gb\ngpus_per_node: 4\nmaster: {interface: none}\n");
  CHECK(none.master_interface.empty());
}

TEST_CASE("alternatives are checked as full shapes and named in errors") {
  std::string err = user_error_of([] {
    resolve_on("gilbreth", "gpu_type: a100-80gb\ngpus_per_node: 4\nalternatives:\n  - {nodes: 2, gpus_per_node: 6}\n");
  });
  CHECK(err.find("alternatives[0].gpus_per_node: 6 exceeds the 4 a100-80gb GPUs per node of cluster gilbreth [shape 2x6]") !=
        std::string::npos);
  auto r = resolve_on("gilbreth", "gpu_type: a100-80gb\ngpus_per_node: 4\nalternatives:\n  - {nodes: 4, gpus_per_node: 1}\n");
  REQUIRE(r.shapes.size() == 2);
  CHECK(r.shapes[0].script_name == "r-1x4.sbatch");
  CHECK(r.shapes[1].script_name == "r-4x1.sbatch");
  CHECK(has_word(r.shapes[1].directives, "--nodes=4"));
}

TEST_CASE("profile errors name the profile file") {
  std::string err = user_error_of([] {
    parse_cluster_profile("clusters/x.yaml",
                          "name: x\ngpu_request: gress\npartitions:\n  p: {gpu_types: [h100]}\n");
  });
  CHECK(err.find("clusters/x.yaml:2:14: gpu_request: 'gress' must be one of") != std::string::npos);
  CHECK(err.find("(did you mean 'gres'?)") != std::string::npos);
  CHECK(err.find("'h100' is not listed under gpu_types:") != std::string::npos);
}

TEST_CASE("DDPCTL_CHECKPOINT_DIR: the trainer's checkpoint_dir, else the run's own folder, set once") {
  auto value = [](const ResolvedRun& r) {
    std::string v;
    int n = 0;
    for (const auto& [name, val] : r.env)
      if (name == "DDPCTL_CHECKPOINT_DIR") v = val, ++n;
    CHECK(n <= 1);
    return v;
  };
  ResolvedRun own = resolve_on("local", "partition: cpu\nnodes: 1\ngpus_per_node: 0\nprocs_per_node: 1\n");
  CHECK(set_checkpoint_folder(own, "/scratch/logs/r-1") == "/scratch/logs/r-1/checkpoint");
  CHECK(value(own) == "/scratch/logs/r-1/checkpoint");
  // Set once: a second call (a retried run) changes nothing.
  CHECK(set_checkpoint_folder(own, "/elsewhere").empty());
  CHECK(value(own) == "/scratch/logs/r-1/checkpoint");

  ResolvedRun trainer = resolve_on("local", "partition: cpu\nnodes: 1\ngpus_per_node: 0\nprocs_per_node: 1\n");
  trainer.spec.trainer_args.push_back("--checkpoint-dir=/scratch/ckpt/r");
  CHECK(set_checkpoint_folder(trainer, "/scratch/logs/r-1").empty());  // ddp-train makes its own
  CHECK(value(trainer) == "/scratch/ckpt/r");

  // A spec's env: cannot set it (DDPCTL_ names are ddpctl's).
  CHECK(user_error_of([] {
          resolve_on("local", "partition: cpu\nnodes: 1\ngpus_per_node: 0\nprocs_per_node: 1\nenv: {DDPCTL_CHECKPOINT_DIR: /x}\n");
        }).find("env: DDPCTL_CHECKPOINT_DIR is reserved for ddpctl") != std::string::npos);

  test::TempDir dir;
  create_checkpoint_folder(own, dir.path + "/a/b/checkpoint");
  CHECK(std::filesystem::is_directory(dir.path + "/a/b/checkpoint"));
  write_file_atomic(dir.path + "/file", "x");
  std::string err = user_error_of([&] { create_checkpoint_folder(own, dir.path + "/file/checkpoint"); });
  CHECK(err.find("cannot create the run's checkpoint folder " + dir.path + "/file/checkpoint (DDPCTL_CHECKPOINT_DIR)") != std::string::npos);
}
