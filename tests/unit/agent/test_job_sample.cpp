// `job sample` (job_sample.cpp): the sampler's loop on a fake clock, the
// watchdog's request for stacks answered between samples, and its end.
#include <algorithm>
#include "catch.hpp"
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/job_sample.hpp"
#include "agent/job_stacks.hpp"
#include "base/files.hpp"
#include "base/text.hpp"
#include "fake_runner.hpp"
#include "helpers.hpp"
#include "runs/usage.hpp"

using namespace ddpctl;
using test::exits;
using test::FakeClock;
using test::FakeEnvironment;
using test::FakeRunner;

// Job 42's sampler on node g1, on a fake clock, with no GPU and an empty /proc.
struct SamplerOnG1 {
  test::TempDir tmp, proc;
  FakeRunner runner;
  FakeClock clock;
  FakeEnvironment env;
  SlurmClient slurm{runner};
  Context ctx{runner, slurm, clock, env};
  SampleOptions o;
  explicit SamplerOnG1(std::map<std::string, std::string> vars) {
    runner.on("nvidia-smi", {}, test::not_found());
    env.vars = std::move(vars);
    o.log_base = tmp.path + "/job_42";
    o.proc_root = proc.path;
  }
};

TEST_CASE("the sampler's loop on a clock: a sample every interval, the stacks asked for answered between", "[job_agent]") {
  SamplerOnG1 f({{"SLURM_JOB_ID", "42"}, {"SLURMD_NODENAME", "g1"}, {"SLURM_RESTART_COUNT", "1"}, {"SLURM_CPUS_ON_NODE", "8"}});
  FakeClock& clock = f.clock;
  FakeRunner& runner = f.runner;
  Context& ctx = f.ctx;
  SampleOptions& o = f.o;
  o.interval_s = 5;
  o.count = 3;
  double start = clock.wall();
  // The watchdog asks for the stacks 7 s in.
  std::string request = stacks_request_path(o.log_base, 1);
  clock.on_sleep = [&] {
    if (clock.wall() >= start + 7 && !std::filesystem::exists(request)) write_file_atomic(request, "1\n");
  };
  run_sampler(o, ctx);
  std::vector<double> times;
  for (const auto& line : split(read_file(usage_path(o.log_base, "g1")), '\n'))
    if (!line.empty()) times.push_back(nlohmann::json::parse(line).at("t").get<double>());
  CHECK(times == std::vector<double>{start, start + 5, start + 10});
  CHECK(clock.sleeps == 20);  // half a second apart, none after the last sample
  CHECK(read_file(stacks_path(o.log_base, 1, "g1")) ==
        "# stacks of job 42's training processes on g1\n(no training process found)\n");
  CHECK(runner.count("nvidia-smi") == 1);  // not on this node: not asked again
}

TEST_CASE("the sampler ends when the process that started it is no longer its parent", "[job_agent]") {
  SamplerOnG1 f({{"SLURM_JOB_ID", "42"}, {"SLURMD_NODENAME", "g1"}});
  FakeClock& clock = f.clock;
  Context& ctx = f.ctx;
  SampleOptions& o = f.o;
  o.count = 2;
  o.parent_pid = ::getppid();  // still this process's parent: both samples are taken
  run_sampler(o, ctx);
  CHECK(split(read_file(usage_path(o.log_base, "g1")), '\n').size() == 3);  // two lines and the empty rest
  // The program it was started for has ended (this process was handed to
  // another parent): not one more sample, no sleep.
  o.count = 0;
  o.parent_pid = ::getppid() + 1;
  int sleeps = clock.sleeps;
  run_sampler(o, ctx);
  CHECK(split(read_file(usage_path(o.log_base, "g1")), '\n').size() == 3);
  CHECK(clock.sleeps == sleeps);
}

TEST_CASE("Slurm's SIGTERM to the step: the sampler writes DDPCTL_PREEMPTED for the program, and ends", "[job_agent]") {
  SamplerOnG1 f({{"SLURM_JOB_ID", "42"}, {"SLURMD_NODENAME", "g1"}});
  const std::string file = f.tmp.path + "/job_42.restart0.sigterm";
  f.env.vars["DDPCTL_PREEMPTED"] = file;
  f.o.interval_s = 5;
  f.o.count = 10;
  struct sigaction before = {};
  ::sigaction(SIGTERM, nullptr, &before);
  // Between samples, as Slurm would: the signal comes to this process.
  f.clock.on_sleep = [&] {
    if (f.clock.sleeps == 3) std::raise(SIGTERM);
  };
  run_sampler(f.o, f.ctx);  // handled: this test process lives on
  CHECK_THAT(read_file(file), Catch::Matchers::Contains("SIGTERM from Slurm reached the training step on g1"));
  CHECK(f.clock.sleeps == 3);  // it ended at once, sampling no more
  struct sigaction after = {};
  ::sigaction(SIGTERM, nullptr, &after);
  CHECK(after.sa_handler == before.sa_handler);  // the handler it found is back
}
