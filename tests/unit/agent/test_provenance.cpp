// What a job attempt ran with (provenance.cpp): the program resolved on
// PATH, a Python program's interpreter asked through a scripted runner, the
// GPU driver through a scripted nvidia-smi, modules and variables from the
// job's environment; and how two records are compared for report and diff.
#include "catch.hpp"
#include <filesystem>
#include <map>

#include "fake_runner.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "agent/provenance.hpp"

using namespace ddpctl;
using test::exits;
using test::FakeRunner;
using test::TempDir;

namespace {

void executable(const std::string& path, const std::string& text = "#!/bin/sh\n") { write_file_atomic(path, text, 0755); }

ProvenanceOptions options(const std::string& cwd, std::vector<std::string> argv) {
  ProvenanceOptions o;
  o.argv = std::move(argv);
  o.cwd = cwd;
  o.nodes = {"g1", "g2"};
  o.env_names = {"MASTER_ADDR", "NCCL_DEBUG", "UNSET_ONE"};
  return o;
}

// The job's environment, PATH one folder (the process's own PATH is left alone).
struct JobOn {
  explicit JobOn(const std::string& path) { env.vars["PATH"] = path; }
  Provenance collect(const ProvenanceOptions& o, FakeRunner& runner) { return collect_provenance(o, runner, env, clock); }
  test::FakeEnvironment env;
  test::FakeClock clock;
};

const char* kProbeAnswer = "python 3.11.2\ntorch 2.14.1\ntorch_cuda 13.0\nnccl 2.27.5\n";

}  // namespace

TEST_CASE("a Python program: interpreter on PATH, script against the working directory, versions asked") {
  TempDir bin, work;
  executable(bin.path + "/python3");
  write_file_atomic(work.path + "/train.py", "print(1)\n");
  JobOn job(bin.path);
  FakeRunner runner;
  runner.on(bin.path + "/python3", {"-c"}, exits(0, kProbeAnswer));
  auto o = options(work.path, {"python3", "-u", "train.py", "--lr", "0.1"});
  job.env.vars.insert({{"SLURM_JOB_ID", "41"}, {"SLURM_RESTART_COUNT", "1"}, {"MASTER_ADDR", "10.0.0.1"},
                       {"NCCL_DEBUG", "WARN"}, {"LOADEDMODULES", "gcc/12:cuda/13.0"}});
  Provenance e = job.collect(o, runner);
  CHECK(e.t == job.clock.wall());
  CHECK(runner.count(bin.path + "/python3") == 1);
  CHECK(e.job_id == "41");
  CHECK(e.attempt == 1);
  CHECK(e.program_path == bin.path + "/python3");
  CHECK(e.script == work.path + "/train.py");
  CHECK(e.python == "3.11.2");
  CHECK(e.torch == "2.14.1");
  CHECK(e.torch_cuda == "13.0");
  CHECK(e.nccl == "2.27.5");
  CHECK(e.modules == std::vector<std::string>{"gcc/12", "cuda/13.0"});
  // Only the variables that are set; in the order asked.
  REQUIRE(e.env.size() == 2);
  CHECK(e.env[1] == std::pair<std::string, std::string>{"NCCL_DEBUG", "WARN"});
  CHECK(e.gpu.empty());  // no nvidia-smi on PATH: nothing asked, nothing noted
  CHECK(e.notes.empty());
  CHECK(provenance_summary(e) == "python 3.11.2, torch 2.14.1 (CUDA 13.0, NCCL 2.27.5), modules gcc/12 cuda/13.0");
}

TEST_CASE("a script whose #! names Python, and a launcher's .py argument") {
  TempDir bin, work;
  executable(bin.path + "/python3");
  executable(bin.path + "/torchrun", "#!/usr/bin/env python3\nimport sys\n");
  executable(work.path + "/train.py", "#!/usr/bin/env -S python3 -u\n");
  JobOn job(bin.path);
  FakeRunner runner;
  runner.on(bin.path + "/python3", {"-c"}, exits(0, "python 3.13.1\n"));  // no torch in it
  SECTION("torchrun") {
    Provenance e = job.collect(options(work.path, {"torchrun", "--nproc-per-node=2", "train.py"}), runner);
    CHECK(e.program_path == bin.path + "/torchrun");
    CHECK(e.script == work.path + "/train.py");
    CHECK(e.python == "3.13.1");
    CHECK(e.torch.empty());
  }
  SECTION("the script itself") {
    Provenance e = job.collect(options(work.path, {"./train.py"}), runner);
    CHECK(e.program_path == work.path + "/train.py");
    CHECK(e.script == work.path + "/train.py");
    CHECK(e.python == "3.13.1");
  }
}

TEST_CASE("what cannot be read becomes a note, never an error") {
  TempDir bin, work;
  executable(bin.path + "/python3");
  executable(bin.path + "/nvidia-smi");
  JobOn job(bin.path);
  FakeRunner runner;
  runner.on(bin.path + "/python3", {"-c"}, test::times_out());
  runner.on("nvidia-smi", {}, exits(9, "", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"));
  Provenance e = job.collect(options(work.path, {"python3", "-m", "trainer.main"}), runner);
  CHECK(e.script == "-m trainer.main");
  CHECK(e.python.empty());
  REQUIRE(e.notes.size() == 2);
  CHECK(e.notes[0].find("could not report its versions") != std::string::npos);
  CHECK(e.notes[1].find("couldn't communicate with the NVIDIA driver") != std::string::npos);

  SECTION("a program that is not there") {
    Provenance m = job.collect(options(work.path, {"./missing.sh"}), runner);
    CHECK(m.program_path.empty());
    CHECK(m.notes.front().find("'./missing.sh' is not found") != std::string::npos);
  }
  SECTION("a shell line is the program; nothing is resolved or run for it") {
    FakeRunner quiet;
    JobOn empty(work.path);
    Provenance s = empty.collect(options(work.path, {"bash", "-c", "python3 x.py"}), quiet);
    CHECK(s.program == "python3 x.py");
    CHECK(quiet.calls.empty());
  }
}

TEST_CASE("the GPU model, driver and the driver's CUDA from nvidia-smi") {
  TempDir bin, work;
  executable(bin.path + "/nvidia-smi");
  JobOn job(bin.path);
  FakeRunner runner;
  runner.on("nvidia-smi", {}, exits(0, "| NVIDIA-SMI 580.95.05   Driver Version: 580.95.05   CUDA Version: 13.0     |\n"));
  runner.on("nvidia-smi", {"--query-gpu=name,driver_version"},
            exits(0, "NVIDIA H100 80GB HBM3, 580.95.05\nNVIDIA H100 80GB HBM3, 580.95.05\n"));
  Provenance e = job.collect(options(work.path, {"/bin/true"}), runner);
  CHECK(e.gpu == "NVIDIA H100 80GB HBM3");
  CHECK(e.driver == "580.95.05");
  CHECK(e.cuda_driver == "13.0");
}

TEST_CASE("records round-trip, and compare on what should match") {
  Provenance a;
  a.job_id = "7";
  a.nodes = {"g1"};
  a.program = "python3";
  a.program_path = "/opt/venv/bin/python3";
  a.python = "3.11.2";
  a.torch = "1.13.1";
  a.modules = {"cuda/12.1"};
  a.env = {{"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "20001"}, {"NCCL_DEBUG", "WARN"}, {"DDPCTL_SNAPSHOT", "/r/.snapshots/aa"}};
  a.notes = {"x"};
  auto back = parse_provenance(provenance_json(a).dump());
  REQUIRE(back);
  CHECK(back->program_path == a.program_path);
  CHECK(back->modules == a.modules);
  CHECK(back->env.size() == a.env.size());
  CHECK(back->notes == a.notes);
  CHECK_FALSE(parse_provenance("{not json"));

  Provenance b = a;
  b.job_id = "8";
  b.nodes = {"g7", "g8"};
  b.env = {{"MASTER_ADDR", "10.0.0.9"}, {"MASTER_PORT", "20002"}, {"NCCL_DEBUG", "WARN"}, {"DDPCTL_SNAPSHOT", "/r/.snapshots/bb"}};
  CHECK(provenance_differences(a, b).empty());  // nodes, rendezvous and snapshot differ by design
  b.torch = "2.14.1";
  b.env[2].second = "INFO";
  b.modules.clear();
  CHECK(provenance_differences(a, b) ==
        std::vector<std::string>{"torch: 1.13.1 -> 2.14.1", "modules: cuda/12.1 -> (none)", "NCCL_DEBUG: WARN -> INFO"});

  SECTION("the Flight Recorder's per-attempt paths differ by design") {
    a.env.emplace_back("TORCH_FR_DUMP_TEMP_FILE", "/r/logs/x_7.restart0.fr/rank_");
    a.env.emplace_back("TORCH_NCCL_DEBUG_INFO_PIPE_FILE", "/r/logs/x_7.restart0.fr/pipe_");
    b = a;
    b.env[4].second = "/r/logs/x_8.restart0.fr/rank_";
    b.env[5].second = "/r/logs/x_8.restart0.fr/pipe_";
    CHECK(provenance_differences(a, b).empty());
  }
  SECTION("a program inside each run's snapshot is the same program") {
    a.program_path = "/r/.snapshots/aa/train.sh";
    b = a;
    b.env[3].second = "/r/.snapshots/bb";
    b.program_path = "/r/.snapshots/bb/train.sh";
    CHECK(provenance_differences(a, b).empty());
  }
}

TEST_CASE("an attempt's record is its own, the newest is named by its attempt") {
  TempDir dir;
  std::string base = dir.path + "/job_5";
  CHECK_FALSE(read_latest_provenance(base));
  Provenance e;
  e.attempt = 0;
  e.python = "3.11";
  write_file_atomic(provenance_path(base, 0), provenance_json(e).dump());
  // Attempt 1 started and has not written its record (yet, or it could not
  // run the agent): status asks for attempt 1's and gets none, not attempt 0's.
  CHECK_FALSE(read_provenance(base, 1));
  CHECK(read_provenance(base, 0)->python == "3.11");
  e.attempt = 2;
  e.python = "3.12";
  write_file_atomic(provenance_path(base, 2), provenance_json(e).dump());
  CHECK(read_latest_provenance(base)->python == "3.12");
  CHECK(read_latest_provenance(base)->attempt == 2);
  CHECK(provenance_line(*read_latest_provenance(base)).find("(attempt 3)") != std::string::npos);
  CHECK(provenance_path(base, 2) == base + ".restart2.environment.json");

  SECTION("the attempt is the file's, whatever the text says") {
    e.attempt = 0;  // a record copied from another attempt
    write_file_atomic(provenance_path(base, 3), provenance_json(e).dump());
    CHECK(read_provenance(base, 3)->attempt == 3);
  }
}
