// The preflight's refusals (preflight.hpp), through the submit workflow and
// the fake Slurm (fake_runner.hpp): each names the spec's file, line and
// field, and nothing is recorded or submitted; --no-preflight submits anyway.
// (The cluster runs of these were tests/slurm/test_preflight_*.sh and
// test_failure_program_not_found.sh.)
#include "catch.hpp"
#include <string>

#include "fake_runner.hpp"
#include "base/files.hpp"
#include "fixtures.hpp"
#include "helpers.hpp"
#include "submit/submit.hpp"

using namespace ddpctl;

namespace {

// A spec of our own on the bundled `local` profile (or `cluster`), its lines
// numbered from 1: name, cluster, time, output_dir, then `body`.
struct Preflight {
  test::SubmitFixture f;
  std::string spec(const std::string& body, const std::string& cluster = "local", const std::string& time = "00:05:00") {
    f.req.spec = f.tmp.path + "/job.yaml";
    f.req.snapshot = false;  // not what is tested here
    write_file_atomic(f.req.spec, "name: pf\ncluster: " + cluster + "\ntime: \"" + time + "\"\noutput_dir: " + f.tmp.path +
                                      "/logs\n" + body);
    return f.req.spec;
  }
  std::string refusal() { return test::user_error_of([&] { f.submit(); }); }
  bool nothing_submitted() { return f.slurm.runner.count("sbatch") == 0 && f.runs().empty(); }
};

}  // namespace

TEST_CASE("preflight: a partition Slurm does not have is refused at its line, with those Slurm has") {
  Preflight p;
  // A profile that names a partition the cluster lost (sinfo has a100-80gb, gpu, cpu).
  std::string profile = p.f.tmp.path + "/drift.yaml";
  write_file_atomic(profile, "name: drift\ngpu_request: gres\ndefault_partition: cpu\ngpu_types:\n  a100: {gres: a100}\n"
                             "partitions:\n  h100: {nodes: 2, gpus_per_node: 8, gpu_types: [a100]}\n"
                             "  cpu: {nodes: 4, gpus_per_node: 0}\n");
  p.spec("partition: h100\ngpus_per_node: 1\ncommand: \"true\"\n", profile);
  std::string error = p.refusal();
  CHECK_THAT(error, Catch::Contains("job.yaml:5:12: partition: partition h100 does not exist on this cluster; "
                                    "Slurm has: a100-80gb, gpu, cpu"));
  CHECK(p.nothing_submitted());
}

TEST_CASE("preflight: an account the user cannot charge is refused at its line, with a suggestion") {
  Preflight p;
  p.spec("partition: cpu\ngpus_per_node: 0\nprocs_per_node: 1\naccount: lusuu\ncommand: \"true\"\n");
  CHECK_THAT(p.refusal(), Catch::Contains("job.yaml:8:10: account: account lusuu is not one you can charge on this "
                                          "cluster (did you mean 'lusu'?)"));
  CHECK(p.nothing_submitted());
  SECTION("--no-preflight leaves it to sbatch") {
    p.f.req.preflight = false;
    CHECK(p.f.submit().kind == SubmitResult::Kind::Submitted);
  }
}

TEST_CASE("preflight: a program not found here is refused before the queue, list, shell line or trainer") {
  Preflight p;
  const std::string base = "partition: cpu\ngpus_per_node: 0\nprocs_per_node: 1\n";
  SECTION("a list command's first word") {
    p.spec(base + "command: [ddpctl-no-such-trainer, --epochs, \"3\"]\n");
    CHECK_THAT(p.refusal(), Catch::Contains("job.yaml:8:10: command[0]: ddpctl-no-such-trainer is not on PATH here; "
                                            "the job would fail with \"command not found\" (exit code 127) after its "
                                            "wait; give its path, or load the module that provides it (modules:); "
                                            "--no-preflight submits anyway"));
    CHECK(p.nothing_submitted());
  }
  SECTION("a shell line's first word") {
    p.spec(base + "command: \"ddpctl-no-such-trainer --epochs 3 | tee train.log\"\n");
    CHECK_THAT(p.refusal(), Catch::Contains("job.yaml:8:10: command: ddpctl-no-such-trainer is not on PATH here"));
    CHECK(p.nothing_submitted());
  }
  SECTION("trainer.program at a path that is not there") {
    p.spec(base + "trainer:\n  program: " + p.f.tmp.path + "/bin/ddp-train\n  data: synthetic\n");
    CHECK_THAT(p.refusal(), Catch::Contains("job.yaml:9:12: trainer.program: " + p.f.tmp.path +
                                            "/bin/ddp-train is not an executable file here; the job would fail with "
                                            "exit code 126 or 127 after its wait"));
    CHECK(p.nothing_submitted());
  }
  SECTION("a shell line that starts with a builtin or a variable is the user's shell: not checked") {
    p.spec(base + "command: \"echo start; $TRAIN --epochs 3\"\n");
    CHECK(p.f.submit().kind == SubmitResult::Kind::Submitted);
  }
  SECTION("--no-preflight submits anyway") {
    p.spec(base + "command: [ddpctl-no-such-trainer]\n");
    p.f.req.preflight = false;
    CHECK(p.f.submit().kind == SubmitResult::Kind::Submitted);
  }
}

TEST_CASE("preflight: a trainer.data folder that does not exist is refused at its line") {
  Preflight p;
  const std::string base = "partition: cpu\ngpus_per_node: 0\nprocs_per_node: 1\ntrainer:\n  program: /bin/true\n";
  p.spec(base + "  data: " + p.f.tmp.path + "/tiny-imagenet\n");
  std::string error = p.refusal();
  CHECK_THAT(error, Catch::Contains("job.yaml:10:") && Catch::Contains("trainer.data") &&
                        Catch::Contains("tiny-imagenet does not exist"));
  CHECK(p.nothing_submitted());
  SECTION("data: synthetic needs no folder") {
    p.spec(base + "  data: synthetic\n");
    CHECK(p.f.submit().kind == SubmitResult::Kind::Submitted);
  }
  SECTION("--no-preflight submits anyway") {
    p.f.req.preflight = false;
    CHECK(p.f.submit().kind == SubmitResult::Kind::Submitted);
  }
}

TEST_CASE("preflight: a partition whose preemption cancels its jobs is refused without requeue:") {
  Preflight p;
  // The profile's contract (doctor's draft): cpu's jobs are cancelled when preempted.
  std::string profile = p.f.tmp.path + "/scav.yaml";
  write_file_atomic(profile, "name: scav\ngpu_request: gres\ndefault_partition: cpu\ngpu_types:\n  a100: {gres: a100}\n"
                             "partitions:\n  cpu: {nodes: 4, gpus_per_node: 0, preemptible: {mode: cancel, "
                             "grace_time: 60, by: [gpu]}}\n");
  p.spec("partition: cpu\ngpus_per_node: 0\nprocs_per_node: 1\ncommand: \"true\"\n", profile);
  CHECK_THAT(p.refusal(), Catch::Contains("job.yaml:5:12: partition: shape 1x1: partition cpu is preemptible and a "
                                          "preemption cancels its jobs (PreemptMode=CANCEL in profile scav): the run "
                                          "would end there, not resume. With `requeue:` ddpctl requeues the job "
                                          "itself within the 60 s grace"));
  CHECK(p.nothing_submitted());
  SECTION("with requeue: it is submitted") {
    p.spec("partition: cpu\ngpus_per_node: 0\nprocs_per_node: 1\ncommand: \"true\"\nrequeue: {grace: 30}\n", profile);
    CHECK(p.f.submit().kind == SubmitResult::Kind::Submitted);
  }
}

TEST_CASE("preflight: a requeue.grace longer than a preemptible partition's grace is refused at its line") {
  Preflight p;
  std::string profile = p.f.tmp.path + "/scav.yaml";
  write_file_atomic(profile, "name: scav\ngpu_request: gres\ndefault_partition: cpu\ngpu_types:\n  a100: {gres: a100}\n"
                             "partitions:\n  cpu: {nodes: 4, gpus_per_node: 0, preemptible: {mode: requeue, "
                             "grace_time: 30, by: [gpu]}}\n");
  p.spec("partition: cpu\ngpus_per_node: 0\nprocs_per_node: 1\ncommand: \"true\"\nrequeue:\n  grace: 90\n", profile);
  CHECK_THAT(p.refusal(), Catch::Contains("job.yaml:10:10: requeue.grace: shape 1x1: 90 s to checkpoint and stop, but "
                                          "partition cpu is preemptible with 30 s between Slurm's SIGTERM and its "
                                          "SIGKILL (GraceTime, profile scav)"));
  CHECK(p.nothing_submitted());
  SECTION("within the grace, or left at its default (it says nothing of the program): submitted") {
    p.spec("partition: cpu\ngpus_per_node: 0\nprocs_per_node: 1\ncommand: \"true\"\nrequeue: {grace: 30}\n", profile);
    CHECK(p.f.submit().kind == SubmitResult::Kind::Submitted);
    p.spec("partition: cpu\ngpus_per_node: 0\nprocs_per_node: 1\ncommand: \"true\"\nrequeue: {}\n", profile, "01:00:00");
    CHECK(p.f.submit().kind == SubmitResult::Kind::Submitted);
  }
}

TEST_CASE("preflight: a preemptible QOS's contract is checked as a partition's") {
  Preflight p;
  std::string profile = p.f.tmp.path + "/qos.yaml";
  write_file_atomic(profile, "name: qossite\ngpu_request: gres\ndefault_partition: cpu\ngpu_types:\n  a100: {gres: a100}\n"
                             "partitions:\n  cpu: {nodes: 4, gpus_per_node: 0}\n"
                             "qos:\n  low: {preemptible: {mode: cancel, grace_time: 40, by: [high]}}\n  normal: {}\n");
  p.spec("partition: cpu\nqos: low\ngpus_per_node: 0\nprocs_per_node: 1\ncommand: \"true\"\n", profile);
  CHECK_THAT(p.refusal(), Catch::Contains("job.yaml:6:6: qos: shape 1x1: QOS low is preemptible and a preemption "
                                          "cancels its jobs (PreemptMode=CANCEL in profile qossite)"));
  p.spec("partition: cpu\nqos: low\ngpus_per_node: 0\nprocs_per_node: 1\ncommand: \"true\"\nrequeue:\n  grace: 60\n",
         profile);
  CHECK_THAT(p.refusal(), Catch::Contains("requeue.grace: shape 1x1: 60 s to checkpoint and stop, but QOS low is "
                                          "preemptible with 40 s"));
  p.spec("partition: cpu\nqos: normal\ngpus_per_node: 0\nprocs_per_node: 1\ncommand: \"true\"\n", profile);
  CHECK(p.f.submit().kind == SubmitResult::Kind::Submitted);
}
