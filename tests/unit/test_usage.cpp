// What a running job uses (usage.cpp): the job's processes read from a fake
// /proc tree written into a temporary folder, samples taken with a scripted
// nvidia-smi, the samples files and what status and report make of them.
#include "catch.hpp"
#include <filesystem>
#include <fmt/format.h>
#include <fstream>

#include "fake_runner.hpp"
#include "files.hpp"
#include "helpers.hpp"
#include "usage.hpp"

using namespace ddpctl;
using test::exits;
using test::FakeRunner;

namespace {

constexpr long long kGiB = 1024LL * 1024 * 1024;
constexpr long long kMiB = 1024LL * 1024;

// A /proc tree in a temporary folder: PID/stat and PID/environ, and meminfo.
struct FakeProc {
  test::TempDir tmp;
  std::string root = tmp.path;

  // `ticks`: utime + stime in clock ticks (100 a second), split between the two.
  void stat(int pid, const std::string& comm, char state, long long ticks, long long start, long long rss_pages) {
    std::filesystem::create_directories(dir(pid));
    long long utime = ticks - ticks / 4, stime = ticks / 4;
    std::ofstream(dir(pid) + "/stat") << fmt::format(
        "{} ({}) {} 1 {} {} 0 -1 4194560 3150 0 12 0 {} {} 0 0 20 0 3 0 {} 2147483648 {} 18446744073709551615 1 1 0 "
        "0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n",
        pid, comm, state, pid, pid, utime, stime, start, rss_pages);
  }
  void environ(int pid, const std::vector<std::string>& vars) {
    std::string text = "PATH=/usr/bin:/bin";
    text += '\0';
    for (const auto& v : vars) text += v + '\0';
    std::ofstream(dir(pid) + "/environ", std::ios::binary) << text;
  }
  // A process of job 42 on g1: a rank of the training step when `rank` >= 0.
  void rank(int pid, int rank, long long ticks, char state = 'S', long long rss_pages = 1000, long long start = 5000) {
    stat(pid, "pt_main_thread", state, ticks, start, rss_pages);
    environ(pid, {"SLURM_JOB_ID=42", "SLURMD_NODENAME=g1", fmt::format("SLURM_PROCID={}", rank),
                  fmt::format("RANK={}", rank), "DDPCTL_TRAINING=1"});
  }
  void meminfo(long long total_kib, long long available_kib) {
    std::ofstream(root + "/meminfo") << fmt::format(
        "MemTotal:       {} kB\nMemFree:         1234 kB\nMemAvailable:   {} kB\nBuffers:          100 kB\n", total_kib,
        available_kib);
  }
  std::string dir(int pid) const { return root + "/" + std::to_string(pid); }
};

// nvidia-smi's answer for a node with four A100s, the second one busy.
const std::string kFourGpus =
    "0, 10, 1000, 81920\n"
    "1, 97, 62464, 81920\n"
    "2, 0, 0, 81920\n"
    "3, [N/A], 500, 81920\n";

UsageSample sample(const std::string& node, double t, int attempt = 0) {
  UsageSample s;
  s.node = node;
  s.job_id = "42";
  s.t = t;
  s.attempt = attempt;
  return s;
}

GpuUsage gpu(int index, double util, double used_mib, double total_mib = 81920) {
  return {index, util, used_mib, total_mib};
}

}  // namespace

TEST_CASE("the reader finds this job's processes on this node by their environment", "[usage]") {
  FakeProc proc;
  // comm may hold spaces and ')': the fields are counted from the last ')'.
  proc.stat(100, "python (rank 0) x", 'R', 400, 5000, 2000);
  proc.environ(100, {"SLURM_JOB_ID=42", "SLURMD_NODENAME=g1", "SLURM_PROCID=0", "RANK=0", "DDPCTL_TRAINING=1"});
  proc.rank(101, 1, 200);
  // The batch shell: the job's, but not of the training step, and no rank.
  proc.stat(106, "bash", 'S', 8, 4000, 300);
  proc.environ(106, {"SLURM_JOB_ID=42", "SLURM_PROCID=3"});
  // Left out: another job's, another node's (nodes that share one kernel),
  // the agent's own, a zombie, one whose environment cannot be read.
  proc.stat(102, "python", 'R', 100, 5000, 100);
  proc.environ(102, {"SLURM_JOB_ID=43", "SLURMD_NODENAME=g1", "RANK=0", "DDPCTL_TRAINING=1"});
  proc.stat(103, "python", 'R', 100, 5000, 100);
  proc.environ(103, {"SLURM_JOB_ID=42", "SLURMD_NODENAME=g2", "RANK=2", "DDPCTL_TRAINING=1"});
  proc.stat(104, "ddpctl", 'S', 100, 5000, 100);
  proc.environ(104, {"SLURM_JOB_ID=42", "SLURMD_NODENAME=g1", "DDPCTL_AGENT_PROCESS=1"});
  proc.rank(105, 5, 100, 'Z');
  proc.stat(107, "sshd", 'S', 100, 5000, 100);
  // Not processes, or not readable as one.
  std::filesystem::create_directories(proc.root + "/self");
  std::filesystem::create_directories(proc.root + "/108");
  std::ofstream(proc.root + "/108/stat") << "108 (torn";
  proc.meminfo(1000, 500);

  JobProcessReader reader(proc.root, "42", 100, 4096, "g1");
  std::vector<ProcessUsage> ps = reader.read();
  REQUIRE(ps.size() == 3);
  CHECK(ps[0].pid == 100);
  CHECK(ps[0].rank == 0);
  CHECK(ps[0].task == 0);
  CHECK(ps[0].training);
  CHECK(ps[0].state == 'R');
  CHECK(ps[0].cpu_s == Approx(4.0));
  CHECK(ps[0].rss_bytes == 2000LL * 4096);
  CHECK(ps[1].pid == 101);
  CHECK(ps[1].rank == 1);
  CHECK(ps[1].state == 'S');
  CHECK(ps[2].pid == 106);
  CHECK_FALSE(ps[2].rank);
  CHECK(ps[2].task == 3);
  CHECK_FALSE(ps[2].training);

  SECTION("without a node, every node's processes of the job count") {
    JobProcessReader anywhere(proc.root, "42", 100, 4096);
    std::vector<int> pids;
    for (const auto& p : anywhere.read()) pids.push_back(p.pid);
    CHECK(pids == std::vector<int>{100, 101, 103, 106});
  }
  SECTION("a job's process not yet training is read again: the step's bash execs the program") {
    proc.environ(106, {"SLURM_JOB_ID=42", "SLURM_PROCID=3", "RANK=3", "DDPCTL_TRAINING=1"});
    std::vector<ProcessUsage> again = reader.read();
    REQUIRE(again.size() == 3);
    CHECK(again[2].pid == 106);
    CHECK(again[2].rank == 3);
    CHECK(again[2].training);
  }
  SECTION("an environment is read once per process; a new process under the same pid is read again") {
    proc.environ(101, {"SLURM_JOB_ID=43"});
    CHECK(reader.read().size() == 3);
    proc.rank(100, 0, 400, 'R', 2000, 9000);  // the same pid, started later
    proc.environ(100, {"SLURM_JOB_ID=43"});
    std::vector<int> pids;
    for (const auto& p : reader.read()) pids.push_back(p.pid);
    CHECK(pids == std::vector<int>{101, 106});
  }
}

TEST_CASE("a sampler's CPU figures are the CPU time used between two samples", "[usage]") {
  FakeProc proc;
  proc.rank(100, 0, 1000, 'R', 2000);
  proc.rank(110, 0, 300, 'S', 500);  // rank 0's data loader worker
  proc.rank(101, 1, 1000, 'R', 3000);
  proc.stat(106, "bash", 'S', 50, 4000, 300);
  proc.environ(106, {"SLURM_JOB_ID=42", "SLURM_PROCID=0"});
  proc.meminfo(16 * 1024 * 1024, 8 * 1024 * 1024);
  FakeRunner runner;
  runner.on("nvidia-smi", {}, exits(0, kFourGpus));

  Sampler::Options o;
  o.proc_root = proc.root;
  o.node = "g1";
  o.job_id = "42";
  o.attempt = 1;
  o.cpus = 8;
  o.mem_limit_bytes = 12 * kGiB;
  o.gpu_indices = {1, 3};
  Sampler sampler(o, runner);

  UsageSample first = sampler.take(1000);
  CHECK(first.node == "g1");
  CHECK(first.job_id == "42");
  CHECK(first.attempt == 1);
  CHECK(first.cpus == 8);
  CHECK(first.interval_s == 0);
  CHECK_FALSE(first.cpu_pct);  // nothing to compare with yet
  REQUIRE(first.ranks.size() == 2);
  CHECK_FALSE(first.ranks[0].cpu_pct);
  CHECK(first.procs == 4);
  CHECK(first.rss_bytes == (2000 + 500 + 3000 + 300) * 4096LL);
  CHECK(first.mem_total_bytes == 16 * kGiB);
  CHECK(first.mem_available_bytes == 8 * kGiB);
  CHECK(first.mem_limit_bytes == 12 * kGiB);

  // 4 s later: rank 0 used 1.5 + 0.5 s (50%), rank 1 4 s (100%), the shell 0.4 s.
  proc.rank(100, 0, 1150, 'R', 2000);
  proc.rank(110, 0, 350, 'D', 500);
  proc.rank(101, 1, 1400, 'R', 3000);
  proc.stat(106, "bash", 'S', 90, 4000, 300);
  UsageSample s = sampler.take(1004);
  CHECK(s.interval_s == Approx(4));
  REQUIRE(s.cpu_pct);
  CHECK(*s.cpu_pct == Approx(100.0 * (2.0 + 4.0 + 0.4) / 4));
  REQUIRE(s.ranks.size() == 2);  // the shell is not of the training step
  const RankUsage& r0 = s.ranks[0];
  CHECK(r0.rank == 0);
  CHECK_FALSE(r0.task);
  CHECK(r0.procs == 2);
  CHECK(r0.states == "RD");
  CHECK(r0.cpu_s == Approx(15.0));
  CHECK(r0.cpu_pct == Approx(50.0));
  CHECK(r0.rss_bytes == 2500 * 4096LL);
  CHECK(s.ranks[1].rank == 1);
  CHECK(s.ranks[1].cpu_pct == Approx(100.0));

  SECTION("only the job's GPUs, where nvidia-smi shows them all") {
    CHECK(runner.calls.back() == nvidia_smi_query());
    REQUIRE(s.gpus.size() == 2);
    CHECK(s.gpus[0].index == 1);
    CHECK(s.gpus[0].util_pct == 97);
    CHECK(s.gpus[0].mem_used_mib == 62464);
    CHECK(s.gpus[0].mem_total_mib == 81920);
    CHECK(s.gpus[1].index == 3);
    CHECK(s.gpus[1].util_pct == 0);  // [N/A]
    CHECK(s.gpu_note.empty());
  }
  SECTION("a process started since the last sample used all its CPU time since") {
    proc.rank(120, 1, 200, 'R', 100);
    UsageSample later = sampler.take(1006);
    REQUIRE(later.ranks.size() == 2);
    CHECK(later.ranks[1].procs == 2);
    CHECK(later.ranks[1].cpu_pct == Approx(100.0 * 2.0 / 2));
  }
}

TEST_CASE("a sampler keeps every GPU when nvidia-smi numbers them otherwise than Slurm", "[usage]") {
  // Under ConstrainDevices nvidia-smi shows the job's GPUs numbered from 0.
  FakeProc proc;
  FakeRunner runner;
  runner.on("nvidia-smi", {}, exits(0, "0, 90, 100, 81920\n1, 80, 200, 81920\n"));
  Sampler::Options o;
  o.proc_root = proc.root;
  o.node = "g1";
  o.job_id = "42";
  o.gpu_indices = {2, 3};
  Sampler sampler(o, runner);
  UsageSample s = sampler.take(1000);
  REQUIRE(s.gpus.size() == 2);
  CHECK(s.gpus[0].index == 0);
  CHECK(s.gpus[1].index == 1);
  CHECK(s.procs == 0);
  CHECK(s.mem_total_bytes == 0);  // no meminfo in this tree
}

TEST_CASE("a sampler says why it has no GPU figures", "[usage]") {
  FakeProc proc;
  FakeRunner runner;
  Sampler::Options o;
  o.proc_root = proc.root;
  o.node = "g1";
  o.job_id = "42";

  SECTION("no nvidia-smi on the node: not asked again") {
    runner.on("nvidia-smi", {}, test::not_found());
    Sampler sampler(o, runner);
    CHECK(sampler.take(1000).gpu_note == "no nvidia-smi on g1");
    UsageSample s = sampler.take(1005);
    CHECK(s.gpus.empty());
    CHECK(s.gpu_note == "no nvidia-smi on g1");
    CHECK(runner.count("nvidia-smi") == 1);
  }
  SECTION("nvidia-smi failing: its error, until it answers again") {
    runner.on("nvidia-smi", {},
              exits(9, "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n"));
    runner.on("nvidia-smi", {}, exits(0, kFourGpus));
    Sampler sampler(o, runner);
    UsageSample s = sampler.take(1000);
    CHECK(s.gpus.empty());
    CHECK(s.gpu_note ==
          "nvidia-smi exited with status 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.");
    UsageSample again = sampler.take(1005);
    CHECK(again.gpus.size() == 4);  // no gpu_indices: every GPU shown
    CHECK(again.gpu_note.empty());
  }
  SECTION("nvidia-smi printing something else") {
    runner.on("nvidia-smi", {}, exits(0, "No devices were found\n"));
    Sampler sampler(o, runner);
    CHECK(sampler.take(1000).gpu_note == "nvidia-smi printed 'No devices were found'");
  }
}

TEST_CASE("nvidia-smi's CSV is read, and anything else is a problem", "[usage]") {
  std::string problem;
  auto gpus = parse_nvidia_smi(kFourGpus + "\n", &problem);
  REQUIRE(gpus);
  REQUIRE(gpus->size() == 4);
  CHECK((*gpus)[1].index == 1);
  CHECK((*gpus)[1].util_pct == 97);
  CHECK((*gpus)[1].mem_used_mib == 62464);
  CHECK((*gpus)[1].mem_total_mib == 81920);
  CHECK((*gpus)[3].util_pct == 0);  // "[N/A]", as a MIG device shows it
  CHECK(problem.empty());

  auto none = parse_nvidia_smi("", &problem);
  REQUIRE(none);
  CHECK(none->empty());

  CHECK_FALSE(parse_nvidia_smi("0, 97, 61000\n", &problem));
  CHECK(problem == "nvidia-smi printed '0, 97, 61000'");
  CHECK_FALSE(parse_nvidia_smi("0, 97, lots, 81920\n", &problem));
  CHECK(problem == "nvidia-smi printed '0, 97, lots, 81920'");
  CHECK_FALSE(parse_nvidia_smi("index, utilization.gpu [%], memory.used [MiB], memory.total [MiB]\n", nullptr));
  CHECK_FALSE(parse_nvidia_smi("0, 97, 61000, 81920\n\x1b[31mFailed\n", &problem));
  CHECK(problem == "nvidia-smi printed '\\u{001b}[31mFailed'");
}

TEST_CASE("a sample survives its JSON line, and a torn line is no sample", "[usage]") {
  UsageSample s = sample("g1", 1795300000.125, 2);
  s.interval_s = 5;
  s.cpus = 16;
  s.cpu_pct = 390.5;
  s.rss_bytes = 13 * kGiB;
  s.procs = 9;
  RankUsage r;
  r.rank = 0;
  r.cpu_s = 812.5;
  r.cpu_pct = 99.5;
  r.rss_bytes = 3 * kGiB;
  r.procs = 5;
  r.states = "RSSSS";
  s.ranks.push_back(r);
  RankUsage t;
  t.task = 1;  // a node's launcher: a task, no rank
  s.ranks.push_back(t);
  s.gpus = {gpu(0, 97, 62464), gpu(1, 0, 0)};
  s.gpu_note = "";
  s.mem_total_bytes = 512 * kGiB;
  s.mem_available_bytes = 400 * kGiB;
  s.mem_limit_bytes = 64 * kGiB;

  std::string line = usage_sample_json(s).dump();
  auto back = parse_usage_sample(line);
  REQUIRE(back);
  CHECK(back->t == Approx(1795300000.125));
  CHECK(back->node == "g1");
  CHECK(back->job_id == "42");
  CHECK(back->attempt == 2);
  CHECK(back->interval_s == 5);
  CHECK(back->cpus == 16);
  CHECK(back->cpu_pct == Approx(390.5));
  CHECK(back->rss_bytes == 13 * kGiB);
  CHECK(back->procs == 9);
  REQUIRE(back->ranks.size() == 2);
  CHECK(back->ranks[0].rank == 0);
  CHECK_FALSE(back->ranks[0].task);
  CHECK(back->ranks[0].cpu_s == 812.5);
  CHECK(back->ranks[0].cpu_pct == 99.5);
  CHECK(back->ranks[0].rss_bytes == 3 * kGiB);
  CHECK(back->ranks[0].procs == 5);
  CHECK(back->ranks[0].states == "RSSSS");
  CHECK_FALSE(back->ranks[1].rank);
  CHECK(back->ranks[1].task == 1);
  CHECK_FALSE(back->ranks[1].cpu_pct);
  REQUIRE(back->gpus.size() == 2);
  CHECK(back->gpus[0].index == 0);
  CHECK(back->gpus[0].util_pct == 97);
  CHECK(back->gpus[0].mem_used_mib == 62464);
  CHECK(back->gpus[0].mem_total_mib == 81920);
  CHECK(back->gpu_note.empty());
  CHECK_FALSE(usage_sample_json(s).contains("gpu_note"));
  CHECK(back->mem_total_bytes == 512 * kGiB);
  CHECK(back->mem_available_bytes == 400 * kGiB);
  CHECK(back->mem_limit_bytes == 64 * kGiB);

  s.cpu_pct.reset();
  s.gpu_note = "no nvidia-smi on g1";
  back = parse_usage_sample(usage_sample_json(s).dump());
  REQUIRE(back);
  CHECK_FALSE(back->cpu_pct);
  CHECK(back->gpu_note == "no nvidia-smi on g1");

  CHECK_FALSE(parse_usage_sample(line.substr(0, line.size() / 2)));
  CHECK_FALSE(parse_usage_sample(""));
  CHECK_FALSE(parse_usage_sample("[1, 2]"));
  CHECK_FALSE(parse_usage_sample(R"({"node": "g1"})"));
}

TEST_CASE("read_usage gathers every node's samples file, of one attempt when asked", "[usage]") {
  test::TempDir tmp;
  std::string base = tmp.path + "/job_42";
  CHECK(usage_path(base, "g1") == tmp.path + "/job_42.usage.g1.jsonl");
  auto line = [](const UsageSample& s) { return usage_sample_json(s).dump() + "\n"; };
  // Out of time order (two samplers of one node across a requeue), and a torn last line.
  write_file_atomic(usage_path(base, "g1"), line(sample("g1", 1010)) + line(sample("g1", 1000)) +
                                                line(sample("g1", 2000, 1)) + line(sample("g1", 2005, 1)) +
                                                R"({"t": 2010, "node": "g1", "att)");
  write_file_atomic(usage_path(base, "g2"), line(sample("g2", 1001)) + line(sample("g2", 2001, 1)));
  // Another job's whose name starts alike, and a file that is not a samples file.
  write_file_atomic(tmp.path + "/job_421.usage.g1.jsonl", line(sample("g9", 1000)));
  write_file_atomic(tmp.path + "/job_42.usage.g1.jsonl.tmp", line(sample("g8", 1000)));

  auto all = read_usage(base);
  REQUIRE(all.size() == 2);
  REQUIRE(all["g1"].size() == 4);
  CHECK(all["g1"][0].t == 1000);
  CHECK(all["g1"][1].t == 1010);
  CHECK(all["g1"][3].t == 2005);
  CHECK(all["g2"].size() == 2);

  auto second = read_usage(base, 1);
  REQUIRE(second.size() == 2);
  CHECK(second["g1"].size() == 2);
  CHECK(second["g1"][0].t == 2000);
  REQUIRE(second["g2"].size() == 1);
  CHECK(second["g2"][0].t == 2001);

  CHECK(read_usage(base, 2).empty());
  CHECK(read_usage(tmp.path + "/missing/job_1").empty());
}

TEST_CASE("read_usage with tail_bytes reads only the samples in each file's tail", "[usage]") {
  test::TempDir tmp;
  std::string base = tmp.path + "/job_42";
  // Lines of one length, so that a tail can end on a line's start or inside one.
  std::vector<std::string> lines;
  for (int i = 0; i < 5; i++) lines.push_back(usage_sample_json(sample("g1", 1000 + i)).dump() + "\n");
  const long long n = static_cast<long long>(lines[0].size());
  for (const auto& l : lines) REQUIRE(static_cast<long long>(l.size()) == n);
  std::string text;
  for (const auto& l : lines) text += l;
  write_file_atomic(usage_path(base, "g1"), text);
  auto times = [&](long long tail) {
    std::vector<double> t;
    auto samples = read_usage(base, -1, tail);
    for (const auto& s : samples["g1"]) t.push_back(s.t);
    return t;
  };
  CHECK(times(0) == std::vector<double>{1000, 1001, 1002, 1003, 1004});
  CHECK(times(10 * n) == std::vector<double>{1000, 1001, 1002, 1003, 1004});
  CHECK(times(5 * n) == std::vector<double>{1000, 1001, 1002, 1003, 1004});
  CHECK(times(2 * n + 5) == std::vector<double>{1003, 1004});  // the cut line is left out
  CHECK(times(2 * n) == std::vector<double>{1003, 1004});      // a tail that starts on a line keeps it
  CHECK(times(2 * n - 1) == std::vector<double>{1004});
}

TEST_CASE("usage_now sums each node's latest sample into one line for status", "[usage]") {
  std::map<std::string, std::vector<UsageSample>> samples;
  UsageSample old = sample("g1", 990);
  old.cpu_pct = 10;
  UsageSample g1 = sample("g1", 1000);
  g1.cpu_pct = 190;
  g1.cpus = 8;
  g1.rss_bytes = 6 * kGiB;
  g1.gpus = {gpu(0, 97, 62464)};
  UsageSample g2 = sample("g2", 998);
  g2.cpu_pct = 200;
  g2.cpus = 8;
  g2.rss_bytes = 6 * kGiB + 100 * kMiB;
  g2.gpus = {gpu(0, 95, 61440)};
  samples["g1"] = {old, g1};
  samples["g2"] = {g2};
  samples["g3"] = {};  // a sampler that wrote nothing yet

  auto u = usage_now(samples);
  REQUIRE(u);
  CHECK(u->t == 998);  // the oldest of the latest
  CHECK(u->cpu_pct == Approx(390));
  CHECK(u->cpus == 16);
  CHECK(u->rss_bytes == 12 * kGiB + 100 * kMiB);
  CHECK(u->gpus == 2);
  CHECK(u->gpu_util_pct == Approx(96));
  CHECK(u->gpu_mem_used_mib == 62464 + 61440);
  CHECK(u->gpu_mem_total_mib == 2 * 81920);
  CHECK(u->nodes.size() == 2);
  // The job's GPUs together: their mean utilisation, their memory summed.
  CHECK(format_usage(*u) == "GPU 96% 121/160 GiB · CPU 390% RSS 12.1 GiB");

  auto j = usage_json(*u, 1010.4);
  CHECK(j["age_s"] == 12);
  CHECK(j["total"]["gpus"] == 2);
  CHECK(j["nodes"]["g2"]["node"] == "g2");

  SECTION("one GPU") {
    samples.erase("g2");
    CHECK(format_usage(*usage_now(samples)) == "GPU 97% 61/80 GiB · CPU 190% RSS 6.0 GiB");
  }
  SECTION("no GPU, and no CPU figure yet at the first sample") {
    UsageNow cpu_only;
    cpu_only.rss_bytes = 312 * kMiB;
    CHECK(format_usage(cpu_only) == "RSS 312 MiB");
  }
  SECTION("nothing sampled") {
    std::map<std::string, std::vector<UsageSample>> empty;
    CHECK_FALSE(usage_now(empty));
    empty["g1"] = {};
    CHECK_FALSE(usage_now(empty));
  }
}

TEST_CASE("summarize_usage gives a whole job's GPU, CPU and memory figures", "[usage]") {
  auto with = [](UsageSample s, std::optional<double> cpu, GpuUsage g, long long rss) {
    s.cpu_pct = cpu;
    s.gpus = {g};
    s.rss_bytes = rss;
    return s;
  };
  std::map<std::string, std::vector<UsageSample>> samples;
  samples["g1"] = {with(sample("g1", 1000), std::nullopt, gpu(0, 80, 1000), 1 * kGiB),
                   with(sample("g1", 1005), 200, gpu(0, 90, 2000), 3 * kGiB),
                   with(sample("g1", 1010), 400, gpu(0, 100, 2000), 2 * kGiB)};
  samples["g2"] = {with(sample("g2", 1000), 100, gpu(0, 50, 1000), 4 * kGiB),
                   with(sample("g2", 1005), 300, gpu(0, 60, 3000), 1 * kGiB)};
  UsageSummary s = summarize_usage(samples);
  CHECK(s.samples == 5);
  CHECK(s.gpu_util_mean == Approx(76));
  CHECK(s.gpu_mem_peak_mib == Approx(3000));
  CHECK(s.gpu_mem_mean_mib == Approx(1800));
  CHECK(s.gpu_mem_mode_mib == Approx(2000));  // 1000 and 2000 twice each: the larger
  CHECK(s.cpu_pct_mean == Approx(300 + 200));  // each node's mean, summed
  CHECK(s.rss_peak_bytes == 4 * kGiB);

  UsageSummary none = summarize_usage({});
  CHECK(none.samples == 0);
  CHECK_FALSE(none.gpu_util_mean);
  CHECK_FALSE(none.gpu_mem_mode_mib);
  CHECK_FALSE(none.cpu_pct_mean);
  CHECK(none.rss_peak_bytes == 0);
}

TEST_CASE("format_bytes shows GiB from one GiB on, MiB below", "[usage]") {
  CHECK(format_bytes(0) == "0 MiB");
  CHECK(format_bytes(312 * kMiB) == "312 MiB");
  CHECK(format_bytes(kGiB) == "1.0 GiB");
  CHECK(format_bytes(kGiB + kGiB / 2) == "1.5 GiB");
  CHECK(format_bytes(12 * kGiB + 100 * kMiB) == "12.1 GiB");
}
