// The culprit decision over recorded stacks (tests/unit/data/stacks/README.md
// says where each came from): a Gloo all_reduce whose rank 1 sleeps in a
// callback, taken by gdb and by faulthandler; py-spy dumps of a real hang.
#include "catch.hpp"
#include "agent/culprit.hpp"
#include "agent/culprit_stacks.hpp"
#include "agent/stack_parse.hpp"
#include "agent/stacks_file.hpp"
#include "base/files.hpp"
#include "helpers.hpp"

using namespace ddpctl;

namespace {

std::string stacks(const std::string& name) { return read_file(test::source_dir() + "/tests/unit/data/stacks/" + name); }

RankEvidence rank(int r, const std::string& node, const std::vector<std::string>& files) {
  RankEvidence e;
  e.task = r;
  e.rank = r;
  e.node = node;
  for (const auto& f : files)
    for (auto& t : parse_stacks(stacks(f))) e.threads.push_back(t);
  return e;
}

const ThreadStack* thread_named(const std::vector<ThreadStack>& ts, const std::string& part) {
  for (const auto& t : ts)
    if (t.name.find(part) != std::string::npos) return &t;
  return nullptr;
}

}  // namespace

TEST_CASE("gdb's thread apply all bt is read into threads and frames", "[culprit]") {
  auto ts = parse_gdb_stacks(stacks("gloo-gdb-rank0-all_reduce.txt"));
  REQUIRE(ts.size() == 5);
  const ThreadStack* main = thread_named(ts, "LWP 17721");
  REQUIRE(main);
  CHECK(main->main);
  CHECK(main->frames.at(3).function == "pthread_cond_wait");
  CHECK(main->frames.at(4).function == "c10d::Work::wait");
  CHECK(main->frames.at(4).file == "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.2.14");
  CHECK(main->frames.at(0).function == "??");
  const ThreadStack* store = thread_named(ts, "pt_tcpstore");
  REQUIRE(store);
  CHECK_FALSE(store->main);
  // No other format's reader takes gdb's lines.
  CHECK(parse_py_spy_stacks(stacks("gloo-gdb-rank0-all_reduce.txt")).empty());
  CHECK(parse_faulthandler_stacks(stacks("gloo-gdb-rank0-all_reduce.txt")).empty());
}

TEST_CASE("a bare gdb backtrace (a core's) is one thread, long frames going on in 'from'", "[culprit]") {
  auto ts = parse_gdb_stacks(stacks("gdb-nccl-workcleanuploop-core.txt"));
  REQUIRE(ts.size() == 1);
  REQUIRE(ts[0].frames.size() == 11);
  CHECK(ts[0].frames[7].function == "c10d::ProcessGroupNCCL::workCleanupLoop");
  CHECK(ts[0].frames[7].file == ".../python3.8/site-packages/torch/lib/libtorch_cuda_cpp.so");
  CHECK(ts[0].frames[2].function == "__gnu_cxx::__verbose_terminate_handler");
}

TEST_CASE("Python's faulthandler dump is read, file, line and function", "[culprit]") {
  auto ts = parse_faulthandler_stacks(stacks("gloo-faulthandler-rank1-sleep.txt"));
  REQUIRE(ts.size() == 1);
  CHECK(ts[0].main);
  CHECK(ts[0].format == StackFormat::Faulthandler);
  REQUIRE(ts[0].frames.size() == 3);
  CHECK(ts[0].frames[0].function == "on_step_end");
  CHECK(ts[0].frames[0].file == "/tmp/culprit-rec/hang.py");
  CHECK(ts[0].frames[0].line == 15);
  CHECK(ts[0].frames[0].python);
  CHECK(parse_gdb_stacks(stacks("gloo-faulthandler-rank1-sleep.txt")).empty());
  CHECK(parse_py_spy_stacks(stacks("gloo-faulthandler-rank1-sleep.txt")).empty());
  // Python before 3.14 names no thread: "Thread 0x... (most recent call first):".
  auto old = parse_faulthandler_stacks("Thread 0x00007f0e1c5fe6c0 (most recent call first):\n"
                                       "  File \"/usr/lib/python3.11/threading.py\", line 324 in wait\n");
  REQUIRE(old.size() == 1);
  CHECK_FALSE(old[0].main);
  CHECK(old[0].frames.at(0).function == "wait");
}

TEST_CASE("a py-spy dump is read", "[culprit]") {
  auto ts = parse_py_spy_stacks(stacks("pyspy-bigscience-dataloader.txt"));
  REQUIRE(ts.size() == 1);
  CHECK(ts[0].name == "MainThread");
  CHECK(ts[0].main);
  REQUIRE(ts[0].frames.size() == 17);
  CHECK(ts[0].frames[0].function == "wait");
  CHECK(ts[0].frames[0].file == "threading.py");
  CHECK(ts[0].frames[0].line == 306);
  CHECK(ts[0].frames.back().function == "<module>");
  CHECK(parse_gdb_stacks(stacks("pyspy-bigscience-dataloader.txt")).empty());
  CHECK(parse_faulthandler_stacks(stacks("pyspy-bigscience-dataloader.txt")).empty());
}

TEST_CASE("every known frame is recognised on its recorded example", "[culprit]") {
  auto gdb0 = parse_gdb_stacks(stacks("gloo-gdb-rank0-all_reduce.txt"));
  auto wait = thread_collective(*thread_named(gdb0, "LWP 17721"));
  REQUIRE(wait);
  CHECK(wait->collective == "a collective (c10d::Work::wait)");
  // The Gloo worker running it, inside runLoop: the innermost known frame decides.
  auto worker = thread_collective(*thread_named(gdb0, "LWP 17787"));
  REQUIRE(worker);
  CHECK(worker->collective == "a collective (gloo::transport::tcp::UnboundBuffer::waitRecv)");
  // Idle threads every rank has: a worker waiting for work, Gloo's event loop, NCCL's watchdog.
  CHECK_FALSE(thread_collective(*thread_named(gdb0, "LWP 17788")));
  CHECK_FALSE(thread_collective(*thread_named(gdb0, "LWP 17785")));
  CHECK_FALSE(thread_collective(parse_gdb_stacks(stacks("gdb-nccl-workcleanuploop-core.txt")).at(0)));
  for (const auto& t : parse_gdb_stacks(stacks("gloo-gdb-rank1-sleep.txt"))) CHECK_FALSE(thread_collective(t));
  // Python frames name the collective.
  CHECK(thread_collective(parse_stacks(stacks("gloo-faulthandler-rank0-all_reduce.txt")).at(0))->collective == "all_reduce");
  CHECK(thread_collective(parse_stacks(stacks("pyspy-bigscience-all_reduce.txt")).at(0))->collective == "all_reduce");
  CHECK(thread_collective(parse_stacks(stacks("pyspy-bigscience-broadcast.txt")).at(0))->collective == "broadcast");
  CHECK_FALSE(thread_collective(parse_stacks(stacks("pyspy-bigscience-dataloader.txt")).at(0)));
  CHECK_FALSE(thread_collective(parse_stacks(stacks("gloo-faulthandler-rank1-sleep.txt")).at(0)));
}

TEST_CASE("the rank outside the collective is named with its frame", "[culprit]") {
  SECTION("faulthandler and gdb both") {
    auto v = decide_culprit({rank(0, "g1", {"gloo-faulthandler-rank0-all_reduce.txt", "gloo-gdb-rank0-all_reduce.txt"}),
                             rank(1, "g1", {"gloo-faulthandler-rank1-sleep.txt", "gloo-gdb-rank1-sleep.txt"})});
    CHECK(v.kind == CulpritKind::Named);
    REQUIRE(v.culprits.size() == 1);
    CHECK(v.culprits[0].rank == 1);
    CHECK(v.text == "rank 1 (g1) is not in a collective — at hang.py:15 in on_step_end (clock_nanosleep); "
                    "rank 0 (g1) waits in all_reduce");
  }
  SECTION("faulthandler alone (no gdb on the nodes)") {
    auto v = decide_culprit({rank(0, "g1", {"gloo-faulthandler-rank0-all_reduce.txt"}),
                             rank(1, "g2", {"gloo-faulthandler-rank1-sleep.txt"}),
                             rank(2, "g2", {"gloo-faulthandler-rank0-all_reduce.txt"}),
                             rank(3, "g3", {"gloo-faulthandler-rank0-all_reduce.txt"})});
    CHECK(v.text == "rank 1 (g2) is not in a collective — at hang.py:15 in on_step_end; "
                    "ranks 0, 2, 3 (g1, g2, g3) wait in all_reduce");
  }
  SECTION("gdb alone: native frames only") {
    auto v = decide_culprit({rank(0, "g1", {"gloo-gdb-rank0-all_reduce.txt"}), rank(1, "g2", {"gloo-gdb-rank1-sleep.txt"})});
    CHECK(v.text == "rank 1 (g2) is not in a collective — at clock_nanosleep; "
                    "rank 0 (g1) waits in a collective (c10d::Work::wait)");
  }
  SECTION("py-spy: a rank stuck in the data loader while others broadcast and all_reduce") {
    auto loader = rank(5, "n48", {"pyspy-bigscience-dataloader.txt"});
    loader.cpu_pct = 0.5;
    auto v = decide_culprit({rank(4, "n48", {"pyspy-bigscience-broadcast.txt"}), loader,
                             rank(6, "n49", {"pyspy-bigscience-all_reduce.txt"})});
    CHECK(v.text == "rank 5 (n48) is not in a collective — at deepspeed/runtime/pipe/engine.py:627 in _next_batch "
                    "(waits for its DataLoader's workers); ranks 4, 6 (n48, n49) wait in collectives (broadcast, all_reduce)");
  }
  SECTION("a busy culprit says so; a rank without stacks is listed") {
    auto sleeper = rank(1, "g1", {"gloo-faulthandler-rank1-sleep.txt"});
    sleeper.cpu_pct = 99.6;
    RankEvidence none;
    none.task = 2;
    none.rank = 2;
    none.node = "g2";
    none.no_stacks_why = "no py-spy or gdb on g2";
    auto v = decide_culprit({rank(0, "g1", {"gloo-faulthandler-rank0-all_reduce.txt"}), sleeper, none});
    CHECK(v.kind == CulpritKind::Named);
    CHECK(v.text == "rank 1 (g1) is not in a collective — at hang.py:15 in on_step_end, using 100% of a core; "
                    "rank 0 (g1) waits in all_reduce; no stacks from rank 2 (g2): no py-spy or gdb on g2");
  }
}

TEST_CASE("when nothing tells the ranks apart, the verdict says why", "[culprit]") {
  RankEvidence a, b;
  a.task = 0, a.rank = 0, a.node = "g1", a.no_stacks_why = "no py-spy or gdb on g1";
  b.task = 1, b.rank = 1, b.node = "g2", b.no_stacks_why = "no py-spy or gdb on g2";
  auto none = decide_culprit({a, b});
  CHECK(none.kind == CulpritKind::NoStacks);
  CHECK(none.text == "no stacks to tell the ranks apart (no py-spy or gdb on g1; no py-spy or gdb on g2)");
  CHECK(decide_culprit({}).kind == CulpritKind::NoStacks);

  auto one = decide_culprit({rank(0, "g1", {"gloo-faulthandler-rank0-all_reduce.txt"}), b});
  CHECK(one.kind == CulpritKind::OneRank);
  CHECK(one.text == "only rank 0 (g1)'s stacks were read, nothing to compare them with (waiting in all_reduce); "
                    "no stacks from rank 1 (g2): no py-spy or gdb on g2");

  auto all = decide_culprit({rank(0, "g1", {"gloo-faulthandler-rank0-all_reduce.txt"}),
                             rank(1, "g1", {"gloo-gdb-rank0-all_reduce.txt"})});
  CHECK(all.kind == CulpritKind::AllInCollective);
  CHECK(all.text == "every rank's stacks show it waiting in collectives (all_reduce, a collective (c10d::Work::wait)), "
                    "so none stands out by its stack");

  auto outside = decide_culprit({rank(0, "g1", {"gloo-faulthandler-rank1-sleep.txt"}),
                                 rank(1, "g1", {"pyspy-bigscience-dataloader.txt"})});
  CHECK(outside.kind == CulpritKind::NoneInCollective);
  CHECK(outside.text == "no rank is in a collective, so the stacks name no culprit");
  CHECK(outside.culprits.empty());
}

TEST_CASE("a node's stacks file is read per rank", "[culprit]") {
  std::string file = "# stacks of job 42's training processes on g1\n"
                     "\n## where the bundled trainer's workers say they are (SIGQUIT)\npid 7: epoch 1\n"
                     "\n## pid 17721 (rank 0), state S: gdb -p 17721 -batch -nx -ex 'thread apply all bt'\n" +
                     stacks("gloo-gdb-rank0-all_reduce.txt") +
                     "\n## pid 17723 (rank 1), state S: gdb -p 17723 -batch -nx -ex 'thread apply all bt'\n" +
                     stacks("gloo-gdb-rank1-sleep.txt");
  auto rs = read_stacks_file(file, "g1");
  REQUIRE(rs.size() == 2);
  CHECK(rs[0].rank == 0);
  CHECK(rs[0].node == "g1");
  CHECK(rs[0].threads.size() == 5);
  CHECK(rs[1].rank == 1);
  CHECK(rs[1].threads.size() == 4);
  CHECK(decide_culprit(rs).culprits.at(0).rank == 1);

  auto bare = read_stacks_file("# stacks of job 42's training processes on g2\n"
                               "pid 11 (rank 2), state S: no py-spy or gdb on g2\n"
                               "pid 12 (task 3), state R: no py-spy or gdb on g2\n",
                               "g2");
  REQUIRE(bare.size() == 2);
  CHECK(bare[0].threads.empty());
  CHECK(bare[0].no_stacks_why == "no py-spy or gdb on g2");
  CHECK(bare[1].task == 3);
  CHECK_FALSE(bare[1].rank);
}

TEST_CASE("DDP's backward waits for the gradient all_reduce: autograd's engine innermost, Reducer::finalize_backward",
          "[culprit]") {
  // multinode.py's rank 0 while rank 1 sleeps: faulthandler shows only autograd's entry into the engine.
  for (const char* f : {"ddp-faulthandler-rank0-backward-torch1.13.txt", "ddp-faulthandler-rank0-backward-torch2.14.txt"}) {
    INFO(f);
    std::optional<CollectiveWait> wait;
    for (const auto& t : parse_stacks(stacks(f)))
      if (auto w = thread_collective(t)) wait = w;
    REQUIRE(wait);
    CHECK(wait->collective == "backward (the gradient all_reduce)");
  }
  // A custom autograd Function's own Python code innermost: the rank is in
  // that code, not waiting for the all_reduce.
  std::string recorded = stacks("ddp-faulthandler-rank0-backward-torch1.13.txt");
  size_t heading = recorded.find('\n') + 1;
  auto own = parse_faulthandler_stacks(recorded.substr(0, heading) + "  File \"/work/model.py\", line 12 in backward\n" +
                                       "  File \"/usr/lib/python3/dist-packages/torch/autograd/function.py\", line 267 in apply\n" +
                                       recorded.substr(heading));
  REQUIRE(own.size() == 1);
  REQUIRE(own[0].frames.size() == 9);
  CHECK_FALSE(thread_collective(own[0]));
  // gdb: the main thread in DDP's Reducer, a Gloo worker in waitRecv.
  for (const char* f : {"ddp-gdb-rank0-finalize_backward-torch1.13.txt", "ddp-gdb-rank0-finalize_backward-torch2.14.txt"}) {
    INFO(f);
    auto ts = parse_gdb_stacks(stacks(f));
    const ThreadStack* main = nullptr;
    for (const auto& t : ts)
      if (t.main) main = &t;
    REQUIRE(main);
    CHECK(thread_collective(*main)->collective == "a collective (c10d::Reducer::finalize_backward)");
  }
  for (const auto& t : parse_gdb_stacks(stacks("ddp-gdb-rank1-sleep-torch1.13.txt"))) CHECK_FALSE(thread_collective(t));
}

TEST_CASE("multinode.py's hang: rank 1 asleep at epoch 1 is named, the others wait in backward", "[culprit]") {
  SECTION("faulthandler alone") {
    auto v = decide_culprit({rank(0, "g1", {"ddp-faulthandler-rank0-backward-torch1.13.txt"}),
                             rank(1, "g1", {"ddp-faulthandler-rank1-sleep-torch1.13.txt"}),
                             rank(2, "g2", {"ddp-faulthandler-rank0-backward-torch2.14.txt"}),
                             rank(3, "g2", {"ddp-faulthandler-rank0-backward-torch1.13.txt"})});
    CHECK(v.kind == CulpritKind::Named);
    CHECK(v.text == "rank 1 (g1) is not in a collective — at multinode.py:61 in _run_epoch; "
                    "ranks 0, 2, 3 (g1, g2) wait in backward (the gradient all_reduce)");
  }
  SECTION("faulthandler and gdb: the frame and what it is inside") {
    auto v = decide_culprit(
        {rank(0, "g1", {"ddp-faulthandler-rank0-backward-torch1.13.txt", "ddp-gdb-rank0-finalize_backward-torch1.13.txt"}),
         rank(1, "g1", {"ddp-faulthandler-rank1-sleep-torch1.13.txt", "ddp-gdb-rank1-sleep-torch1.13.txt"})});
    CHECK(v.text == "rank 1 (g1) is not in a collective — at multinode.py:61 in _run_epoch (clock_nanosleep); "
                    "rank 0 (g1) waits in backward (the gradient all_reduce)");
  }
  SECTION("gdb alone") {
    auto v = decide_culprit({rank(0, "g1", {"ddp-gdb-rank0-finalize_backward-torch1.13.txt"}),
                             rank(1, "g1", {"ddp-gdb-rank1-sleep-torch1.13.txt"})});
    CHECK(v.kind == CulpritKind::Named);
    CHECK(v.culprits.at(0).rank == 1);
  }
}

TEST_CASE("a program run as python -m: its main thread ends in runpy, whose frames are no place of the program",
          "[culprit]") {
  // torchrun's agent (python3 -m torch.distributed.run): two log-tailing threads, then the main thread.
  auto ts = parse_faulthandler_stacks(stacks("torchrun-faulthandler-launcher-torch1.13.txt"));
  REQUIRE(ts.size() == 3);
  CHECK_FALSE(ts[0].main);
  CHECK_FALSE(ts[1].main);
  CHECK(ts[2].main);
  RankEvidence r;
  r.rank = 0;
  r.threads = ts;
  RankEvidence other = rank(1, "", {"ddp-faulthandler-rank0-backward-torch1.13.txt"});
  CHECK(decide_culprit({r, other}).text ==
        "rank 0 is not in a collective — at api.py:850 in _invoke_run; rank 1 waits in backward (the gradient all_reduce)");
}

TEST_CASE("a stacks file: the launcher is left out, a rank taken two ways is one rank, its DataLoader's workers are its own",
          "[culprit]") {
  // Recorded with `ddpctl job stacks` on loader_hang.py --workers 2 (two ranks, each with two workers;
  // rank 1's second worker blocked in __getitem__), faulthandler and gdb on the node.
  auto rs = read_stacks_file(stacks("stacks-file-loader-workers-torch1.13.txt"), "n1");
  REQUIRE(rs.size() == 2);
  CHECK(rs[0].rank == 0);
  CHECK(rs[0].taken_by == std::vector<StackFormat>{StackFormat::Faulthandler, StackFormat::Gdb});
  REQUIRE(rs[1].children.size() == 2);
  CHECK(rs[1].children[0].pid == 3775);
  CHECK(rs[1].children[1].pid == 3778);
  CHECK(describe_stack_sources(rs) == "faulthandler and gdb: ranks 0, 1 (n1)");
  auto v = decide_culprit(rs);
  CHECK(v.kind == CulpritKind::Named);
  CHECK(v.text == "rank 1 (n1) is not in a collective — at loader_hang.py:43 in main (waits for its DataLoader: "
                  "worker pid 3778 at loader_hang.py:28 in __getitem__); rank 0 (n1) waits in all_reduce");
  // Without its workers' stacks it still says where it waits.
  rs[1].children.clear();
  CHECK(decide_culprit(rs).text == "rank 1 (n1) is not in a collective — at loader_hang.py:43 in main (waits for its "
                                   "DataLoader's workers); rank 0 (n1) waits in all_reduce");

  std::string launcher = "## pid 900 (task 0, launcher), state S: faulthandler (signal 42)\n" +
                         stacks("torchrun-faulthandler-launcher-torch1.13.txt") +
                         "pid 901 (task 1, launcher), state S: not asked further, a launcher is no rank: it did not "
                         "register for faulthandler (not Python, or started without ddpctl's sitecustomize)\n"
                         "\n## pid 910 (rank 1), state S: faulthandler (signal 42)\n" +
                         stacks("ddp-faulthandler-rank1-sleep-torch1.13.txt");
  auto only = read_stacks_file(launcher, "g1");
  REQUIRE(only.size() == 1);
  CHECK(only[0].rank == 1);
  CHECK(only[0].threads.size() == 1);
}

TEST_CASE("a way that gave no frames (gdb stopped at the budget) is not how the stacks were taken", "[culprit]") {
  auto rs = read_stacks_file(stacks("stacks-file-gdb-too-slow-torch1.13.txt"), "g1");
  REQUIRE(rs.size() == 2);
  CHECK(rs[0].taken_by == std::vector<StackFormat>{StackFormat::Faulthandler});
  CHECK(describe_stack_sources(rs) == "faulthandler: ranks 0, 1 (g1)");
  CHECK(decide_culprit(rs).text == "rank 1 (g1) is not in a collective — at trainer_callback_hang.py:82 in on_step_end; "
                                   "rank 0 (g1) waits in backward (the gradient all_reduce)");
}

TEST_CASE("Python 3.14's forkserver: the workers are its children, the forkserver and resource tracker no workers",
          "[culprit]") {
  // Recorded as stacks-file-loader-workers-torch1.13.txt, in Debian forky (torch 2.14, Python 3.14: DataLoader
  // workers forked by a forkserver, which `python -c` started beside a resource tracker, each with the rank's RANK).
  auto rs = read_stacks_file(stacks("stacks-file-loader-forkserver-torch2.14.txt"), "n1");
  REQUIRE(rs.size() == 2);
  CHECK(rs[0].children.size() == 4);
  CHECK(rs[1].children.size() == 4);
  CHECK(decide_culprit(rs).text == "rank 1 (n1) is not in a collective — at loader_hang.py:43 in main (waits for its "
                                   "DataLoader: worker pid 18586 at loader_hang.py:28 in __getitem__); rank 0 (n1) waits "
                                   "in all_reduce");
}

TEST_CASE("faulthandler's Garbage-collecting note inside a thread keeps the thread's frames", "[culprit]") {
  auto ts = parse_faulthandler_stacks("Current thread 0x00007f3a0b3e8200 [python3] (most recent call first):\n"
                                      "  Garbage-collecting\n"
                                      "  File \"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py\", "
                                      "line 3913 in all_reduce\n"
                                      "  File \"/tmp/loader_hang.py\", line 45 in main\n");
  REQUIRE(ts.size() == 1);
  REQUIRE(ts[0].frames.size() == 2);
  CHECK(ts[0].frames[0].function == "all_reduce");
  // Recorded on Slurm 26.05 (torch 2.14, Python 3.14; tests/slurm's loader_worker_read under CI's load): rank 3's
  // faulthandler dump came while its garbage collector ran, and rank 3 read as waiting in gdb's c10d::Work::wait.
  auto rs = read_stacks_file(stacks("stacks-file-loader-gc-torch2.14-g1.txt"), "g1");
  for (auto& r : read_stacks_file(stacks("stacks-file-loader-gc-torch2.14-g2.txt"), "g2")) rs.push_back(std::move(r));
  REQUIRE(rs.size() == 4);
  CHECK(decide_culprit(rs).text == "rank 1 (g1) is not in a collective — at loader_hang.py:43 in main (waits for its "
                                   "DataLoader: worker pid 21155 at loader_hang.py:28 in __getitem__); ranks 0, 2, 3 "
                                   "(g1, g2) wait in all_reduce");
}

TEST_CASE("a rank whose process is a shell wrapper is where its Python child is", "[culprit]") {
  // `bash -c 'python3 train.py'` without exec: the rank's process has gdb's native frames only.
  RankEvidence wrapped = rank(1, "g1", {"ddp-gdb-rank1-sleep-torch1.13.txt"});
  wrapped.children.push_back({4242, parse_stacks(stacks("ddp-faulthandler-rank1-sleep-torch1.13.txt"))});
  auto v = decide_culprit({rank(0, "g1", {"ddp-faulthandler-rank0-backward-torch1.13.txt"}), wrapped});
  CHECK(v.text == "rank 1 (g1) is not in a collective — at multinode.py:61 in _run_epoch; "
                  "rank 0 (g1) waits in backward (the gradient all_reduce)");
}
