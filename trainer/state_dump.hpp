#pragma once
// What a worker is doing, for ddpctl's watchdog (docs/running.md): the
// training loop says where it is (set_phase, cheap: a formatted line into one
// of two buffers); on SIGQUIT the handler writes that line, with how long it
// has been there, into $DDPCTL_LOG_BASE.state.<node>.<pid>.txt, which the job
// agent's stack dump of this node reads. Only async-signal-safe calls in the
// handler: open, write, close, rename, clock_gettime, and lock-free atomic
// loads. The line is written into <file>.tmp and renamed onto the file, so a
// reader sees the whole line or none (one read half a line under load).
//
// The line ends with the collectives this rank has entered and left, counted
// (CollectiveScope): every rank runs the same collectives in the same order,
// so the n-th one it enters is the n-th on every rank, and a rank that has
// left #56 and not entered #57 while the others wait in #57 is the one that
// hung the job (ddpctl's culprit decision reads it; docs/running.md):
//   ddp-train: rank 1: epoch 1, step 3 of 50: loading a batch for 31 s; collectives: entered #56 all_reduce (the step's start), left #56 all_reduce (the step's start)
//   ddp-train: rank 0: epoch 1, step 3 of 50: backward and the gradient allreduce for 31 s; collectives: entered #57 backward with the Reducer's gradient all_reduce, left #56 all_reduce (the step's start)
//   ddp-train: rank 0 of 2: in the rendezvous for 2 s; collectives: none yet
// No name holds a comma, so "entered #E NAME, left #L NAME" splits at ", left #".
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <unistd.h>

namespace ddptrain::state_dump {

struct Slot {
  char text[384];
  size_t len;
  time_t since;  // CLOCK_MONOTONIC seconds
};
inline Slot g_slots[2];
inline std::atomic<int> g_current{-1};
inline char g_path[4096];
inline char g_tmp_path[4096 + 8];  // written first, then renamed onto g_path: a reader never sees half a line

// "rank 3: epoch 2, step 17 of 120: waiting in the gradient allreduce"
inline void set_phase(const char* fmt, ...) {
  int next = g_current.load(std::memory_order_relaxed) == 0 ? 1 : 0;
  Slot& s = g_slots[next];
  va_list ap;
  va_start(ap, fmt);
  int n = std::vsnprintf(s.text, sizeof s.text, fmt, ap);
  va_end(ap);
  s.len = n < 0 ? 0 : std::min(static_cast<size_t>(n), sizeof s.text - 1);
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  s.since = now.tv_sec;
  g_current.store(next, std::memory_order_release);
}

inline void write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w <= 0) return;
    p += w, n -= static_cast<size_t>(w);
  }
}

inline void write_str(int fd, const char* s) { write_all(fd, s, std::strlen(s)); }

inline void write_number(int fd, unsigned long long v) {
  char num[24];
  int i = sizeof num;
  do num[--i] = static_cast<char>('0' + v % 10), v /= 10;
  while (v > 0 && i > 0);
  write_all(fd, num + i, sizeof num - static_cast<size_t>(i));
}

// The collectives ddp-train waits on, by what they are for. The Reducer's
// bucket allreduces are launched from autograd hooks, inside backward: they
// are counted as one, around the backward that launches and finishes them.
enum class Collective : std::uint8_t {
  None,
  HalfProbe,
  ModelCheck,
  ModelBroadcast,
  StepStart,
  BucketRebuild,
  ReducerBackward,
  Gradients,
  EpochStats,
  Validation,
  Barrier,
  ReplicaCheck,
};

inline const char* collective_name(Collective c) {
  switch (c) {
    case Collective::None: return "none";
    case Collective::HalfProbe: return "all_reduce (fp16 probe)";
    case Collective::ModelCheck: return "all_reduce (model shape check)";
    case Collective::ModelBroadcast: return "broadcast (rank 0's parameters)";
    case Collective::StepStart: return "all_reduce (the step's start)";
    case Collective::BucketRebuild: return "broadcast (the Reducer's bucket rebuild)";
    case Collective::ReducerBackward: return "backward with the Reducer's gradient all_reduce";
    case Collective::Gradients: return "all_reduce (gradients)";
    case Collective::EpochStats: return "all_reduce (epoch statistics)";
    case Collective::Validation: return "all_reduce (validation statistics)";
    case Collective::Barrier: return "barrier";
    case Collective::ReplicaCheck: return "all_reduce (replica check)";
  }
  return "none";
}

// (sequence number << 8) | Collective, in one word each, so that the handler
// never reads a number with another collective's name. Written by the thread
// that runs the collectives (the main thread), read by the handler.
inline std::atomic<std::uint64_t> g_entered{0}, g_left{0};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

inline void enter(Collective c) {
  std::uint64_t seq = (g_entered.load(std::memory_order_relaxed) >> 8) + 1;
  g_entered.store(seq << 8 | static_cast<std::uint64_t>(c), std::memory_order_release);
}
inline void leave() { g_left.store(g_entered.load(std::memory_order_relaxed), std::memory_order_release); }

// Entered for its lifetime; left also when the collective throws.
class CollectiveScope {
 public:
  explicit CollectiveScope(Collective c) { enter(c); }
  ~CollectiveScope() { leave(); }
  CollectiveScope(const CollectiveScope&) = delete;
  CollectiveScope& operator=(const CollectiveScope&) = delete;
};

inline void write_collectives(int fd) {
  std::uint64_t e = g_entered.load(std::memory_order_acquire), l = g_left.load(std::memory_order_acquire);
  if (e == 0) {
    write_str(fd, "; collectives: none yet");
    return;
  }
  write_str(fd, "; collectives: entered #");
  write_number(fd, e >> 8);
  write_str(fd, " ");
  write_str(fd, collective_name(static_cast<Collective>(e & 0xff)));
  write_str(fd, ", left #");
  write_number(fd, l >> 8);
  write_str(fd, " ");
  write_str(fd, collective_name(static_cast<Collective>(l & 0xff)));
}

inline void on_quit(int) {
  int saved = errno;
  int cur = g_current.load(std::memory_order_acquire);
  int fd = g_path[0] ? ::open(g_tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : 2;
  if (fd >= 0) {
    const char* head = "ddp-train: ";
    write_all(fd, head, std::strlen(head));
    if (cur < 0) {
      const char* none = "starting (before the rendezvous)";
      write_all(fd, none, std::strlen(none));
    } else {
      const Slot& s = g_slots[cur];
      write_all(fd, s.text, s.len);
      timespec now{};
      clock_gettime(CLOCK_MONOTONIC, &now);
      long secs = static_cast<long>(now.tv_sec - s.since);
      write_str(fd, " for ");
      write_number(fd, static_cast<unsigned long long>(secs < 0 ? 0 : secs));
      write_str(fd, " s");
    }
    write_collectives(fd);
    write_all(fd, "\n", 1);
    if (fd != 2) {
      ::close(fd);
      ::rename(g_tmp_path, g_path);  // async-signal-safe, as open, write and close are
    }
  }
  errno = saved;
}

// Installs the handler; the file is $DDPCTL_LOG_BASE.state.<node>.<pid>.txt
// (pids repeat across nodes sharing the folder), else the worker's stderr.
inline void install() {
  const char* base = std::getenv("DDPCTL_LOG_BASE");
  const char* node = std::getenv("SLURMD_NODENAME");
  if (base && *base) {
    std::snprintf(g_path, sizeof g_path, "%s.state.%s.%ld.txt", base, node && *node ? node : "local",
                  static_cast<long>(::getpid()));
    std::snprintf(g_tmp_path, sizeof g_tmp_path, "%s.tmp", g_path);
  }
  struct sigaction sa {};
  sa.sa_handler = on_quit;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGQUIT, &sa, nullptr);
}

}  // namespace ddptrain::state_dump
