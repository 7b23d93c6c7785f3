#pragma once
// What a worker is doing, for ddpctl's watchdog (docs/running.md): the
// training loop says where it is (set_phase, cheap: a formatted line into one
// of two buffers); on SIGQUIT the handler writes that line, with how long it
// has been there, into $DDPCTL_LOG_BASE.state.<node>.<pid>.txt, which the job
// agent's stack dump of this node reads. Only async-signal-safe calls in the
// handler: open, write, close, clock_gettime.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdarg>
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

inline void on_quit(int) {
  int saved = errno;
  int cur = g_current.load(std::memory_order_acquire);
  int fd = g_path[0] ? ::open(g_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : 2;
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
      char num[32];
      int i = sizeof num;
      num[--i] = '\0';
      do num[--i] = static_cast<char>('0' + secs % 10), secs /= 10;
      while (secs > 0 && i > 0);
      write_all(fd, " for ", 5);
      write_all(fd, num + i, std::strlen(num + i));
      write_all(fd, " s", 2);
    }
    write_all(fd, "\n", 1);
    if (fd != 2) ::close(fd);
  }
  errno = saved;
}

// Installs the handler; the file is $DDPCTL_LOG_BASE.state.<node>.<pid>.txt
// (pids repeat across nodes sharing the folder), else the worker's stderr.
inline void install() {
  const char* base = std::getenv("DDPCTL_LOG_BASE");
  const char* node = std::getenv("SLURMD_NODENAME");
  if (base && *base)
    std::snprintf(g_path, sizeof g_path, "%s.state.%s.%ld.txt", base, node && *node ? node : "local",
                  static_cast<long>(::getpid()));
  struct sigaction sa {};
  sa.sa_handler = on_quit;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGQUIT, &sa, nullptr);
}

}  // namespace ddptrain::state_dump
