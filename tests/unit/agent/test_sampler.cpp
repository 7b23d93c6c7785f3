// Taking usage samples (sampler.cpp): the job's processes read from a fake
// /proc tree written into a temporary folder, samples taken with a scripted
// nvidia-smi.
#include "catch.hpp"
#include <filesystem>
#include <fmt/format.h>
#include <fstream>

#include "fake_runner.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "agent/sampler.hpp"

using namespace ddpctl;
using test::exits;
using test::FakeRunner;

namespace {

using test::kGiB;

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
  // A thread of `pid` that has run `run_ns` and waited `delay_ns` for a CPU (its schedstat).
  void thread(int pid, int tid, long long run_ns, long long delay_ns) {
    std::filesystem::create_directories(dir(pid) + "/task/" + std::to_string(tid));
    std::ofstream(dir(pid) + "/task/" + std::to_string(tid) + "/schedstat") << fmt::format("{} {} 42\n", run_ns, delay_ns);
  }
  std::string dir(int pid) const { return root + "/" + std::to_string(pid); }
};

// nvidia-smi's answer for a node with four A100s, the second one busy.
const std::string kFourGpus =
    "0, 10, 1000, 81920\n"
    "1, 97, 62464, 81920\n"
    "2, 0, 0, 81920\n"
    "3, [N/A], 500, 81920\n";

}  // namespace

TEST_CASE("the reader finds this job's processes on this node by their environment", "[usage]") {
  FakeProc proc;
  // comm may hold spaces and ')': the fields are counted from the last ')'.
  proc.stat(100, "python (rank 0) x", 'R', 400, 5000, 2000);
  proc.environ(100, {"SLURM_JOB_ID=42", "SLURMD_NODENAME=g1", "SLURM_PROCID=0", "RANK=0", "DDPCTL_TRAINING=1",
                     "SLURM_CLUSTER_NAME=local", "SLURM_CONF=/a/slurm.conf"});
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
  // Job 42 of another cluster whose node g1 shares this kernel: by name, or
  // by its slurm.conf where the clusters' names are the same.
  for (int pid : {109, 110}) proc.stat(pid, "python", 'R', 100, 5000, 100);
  proc.environ(109, {"SLURM_JOB_ID=42", "SLURMD_NODENAME=g1", "RANK=1", "DDPCTL_TRAINING=1", "SLURM_CLUSTER_NAME=other"});
  proc.environ(110, {"SLURM_JOB_ID=42", "SLURMD_NODENAME=g1", "RANK=1", "DDPCTL_TRAINING=1", "SLURM_CLUSTER_NAME=local",
                     "SLURM_CONF=/b/slurm.conf"});
  // Not processes, or not readable as one.
  std::filesystem::create_directories(proc.root + "/self");
  std::filesystem::create_directories(proc.root + "/108");
  std::ofstream(proc.root + "/108/stat") << "108 (torn";
  proc.meminfo(1000, 500);

  JobProcessReader reader(proc.root, {"42", "g1", "local", "/a/slurm.conf"}, 100, 4096);
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

  SECTION("without a node and a cluster, every process of a job 42 counts") {
    JobProcessReader anywhere(proc.root, {"42", "", "", ""}, 100, 4096);
    std::vector<int> pids;
    for (const auto& p : anywhere.read()) pids.push_back(p.pid);
    CHECK(pids == std::vector<int>{100, 101, 103, 106, 109, 110});
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

TEST_CASE("a sampler's wait figures are the time the ranks' threads waited for a CPU", "[usage][straggler]") {
  // Rank 1 is throttled (a CPU quota, or a busy neighbour): its threads are
  // runnable most of the time and run little; rank 0's run when they want.
  FakeProc proc;
  proc.rank(100, 0, 100, 'R');
  proc.thread(100, 100, 1000000000, 10000000);
  proc.rank(101, 1, 100, 'R');
  proc.thread(101, 101, 1000000000, 2000000000);
  proc.thread(101, 105, 0, 500000000);
  proc.stat(106, "bash", 'S', 50, 4000, 300);  // not of the training step: not read
  proc.environ(106, {"SLURM_JOB_ID=42", "SLURM_PROCID=0"});
  proc.thread(106, 106, 0, 900000000000);
  FakeRunner runner;
  runner.on("nvidia-smi", {}, test::not_found());
  Sampler::Options o;
  o.proc_root = proc.root;
  o.node = "g1";
  o.job_id = "42";
  Sampler sampler(o, runner);
  UsageSample first = sampler.take(1000);
  REQUIRE(first.ranks.size() == 2);
  CHECK_FALSE(first.ranks[1].wait_pct);  // nothing to compare with yet

  // 4 s later: rank 0's thread waited 0.04 s more (1%), rank 1's two 1.8 + 1.8 s (90%).
  proc.thread(100, 100, 3000000000, 50000000);
  proc.thread(101, 101, 1400000000, 3800000000);
  proc.thread(101, 105, 0, 2300000000);
  UsageSample s = sampler.take(1004);
  REQUIRE(s.ranks.size() == 2);
  CHECK(s.ranks[0].wait_pct == Approx(1.0));
  CHECK(s.ranks[1].wait_pct == Approx(90.0));

  SECTION("a thread that ended takes its share with it: never a negative wait") {
    std::filesystem::remove_all(proc.dir(101) + "/task/105");
    UsageSample later = sampler.take(1008);
    CHECK(later.ranks[1].wait_pct == Approx(0.0));
  }
}
