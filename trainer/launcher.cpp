#include "launcher.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <poll.h>
#include <string>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

namespace ddptrain {

namespace {

volatile sig_atomic_t g_signal = 0;
void on_signal(int sig) { g_signal = sig; }

struct Worker {
  int local_rank = 0, rank = 0;
  pid_t pid = -1;
  int out_fd = -1;  // the worker's stdout and stderr, merged
  std::string partial, last_line;
  bool done = false;
  int status = 0;
};

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  return (end && *end == '\0') ? static_cast<int>(n) : fallback;
}

// NODE_RANK and NNODES as the sbatch script exports them, else Slurm's.
int node_rank() { return env_int("NODE_RANK", env_int("SLURM_NODEID", 0)); }
int node_count() { return env_int("NNODES", env_int("SLURM_NNODES", env_int("SLURM_JOB_NUM_NODES", 1))); }

// This binary's path, so that workers show in ps and top as ddp-train (exec
// of /proc/self/exe would name them "exe"); /proc/self/exe itself if the file
// was replaced since this process started.
std::string self_path() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "/proc/self/exe";
  std::string path(buf, static_cast<size_t>(n));
  if (path.size() > 10 && path.compare(path.size() - 10, 10, " (deleted)") == 0) return "/proc/self/exe";
  return path;
}

pid_t spawn(Worker& w, int world, int nproc, int node, const std::vector<std::string>& args) {
  static const std::string self = self_path();
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    setenv("RANK", std::to_string(w.rank).c_str(), 1);
    setenv("LOCAL_RANK", std::to_string(w.local_rank).c_str(), 1);
    setenv("WORLD_SIZE", std::to_string(world).c_str(), 1);
    setenv("LOCAL_WORLD_SIZE", std::to_string(nproc).c_str(), 1);
    setenv("NODE_RANK", std::to_string(node).c_str(), 1);
    if (!std::getenv("MASTER_ADDR")) setenv("MASTER_ADDR", "127.0.0.1", 1);
    if (!std::getenv("MASTER_PORT")) setenv("MASTER_PORT", "29500", 1);
    for (int sig : kStopSignals) signal(sig, SIG_DFL);
    signal(SIGQUIT, SIG_DFL);  // the worker answers it (state_dump.hpp)
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>("ddp-train"));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(self.c_str(), argv.data());
    std::fprintf(stderr, "ddp-train: error: cannot start worker: %s\n", std::strerror(errno));
    _exit(127);
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return -1;
  }
  w.out_fd = fds[0];
  return pid;
}

// Copies a worker's output through, rank 0 unchanged and others prefixed,
// remembering its last complete line.
void forward(Worker& w) {
  char buf[8192];
  ssize_t n = read(w.out_fd, buf, sizeof buf);
  if (n <= 0) {
    if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
      close(w.out_fd);
      w.out_fd = -1;
    }
    return;
  }
  w.partial.append(buf, static_cast<size_t>(n));
  size_t nl;
  while ((nl = w.partial.find('\n')) != std::string::npos) {
    std::string line = w.partial.substr(0, nl);
    w.partial.erase(0, nl + 1);
    if (!line.empty()) w.last_line = line;
    if (w.rank == 0)
      std::printf("%s\n", line.c_str());
    else
      std::printf("[rank %d] %s\n", w.rank, line.c_str());
  }
  std::fflush(stdout);
}

std::string describe(const Worker& w) {
  char what[128];
  if (WIFSIGNALED(w.status))
    std::snprintf(what, sizeof what, "was killed by signal %d (%s)", WTERMSIG(w.status), strsignal(WTERMSIG(w.status)));
  else
    std::snprintf(what, sizeof what, "exited with status %d", WEXITSTATUS(w.status));
  std::string s = "rank " + std::to_string(w.rank) + " (local rank " + std::to_string(w.local_rank) + ", pid " +
                  std::to_string(w.pid) + ") " + what;
  std::string last = w.last_line.empty() ? w.partial : w.last_line;
  if (!last.empty()) s += "; its last line: " + last;
  return s;
}

// A worker that failed only because another one did (its peer's socket
// closed under it): the launcher names the worker that failed first instead.
bool is_consequence(const Worker& w) {
  const std::string& last = w.last_line.empty() ? w.partial : w.last_line;
  for (const char* p : {"Connection closed by peer", "Connection reset by peer", "Broken pipe"})
    if (last.find(p) != std::string::npos) return true;
  return false;
}

double monotonic_s() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

// Only started workers: a worker not (yet) started has pid -1, and
// kill(-1, sig) would signal every process this user may signal.
void signal_all(std::vector<Worker>& ws, int sig) {
  for (auto& w : ws)
    if (!w.done && w.pid > 0) kill(w.pid, sig);
}

// The stop signals are passed on to the workers (Supervisor::pass_signal).
void catch_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : kStopSignals) sigaction(sig, &sa, nullptr);
  // SIGQUIT asks the workers where they are (state_dump.hpp); the launcher
  // itself has nothing to say and must not dump core.
  signal(SIGQUIT, SIG_IGN);
}

// One worker per local rank; false, with the others killed, when one cannot start.
bool start_workers(std::vector<Worker>& ws, int node, int world, const std::vector<std::string>& worker_args) {
  int nproc = static_cast<int>(ws.size());
  for (int l = 0; l < nproc; ++l) {
    Worker& w = ws[static_cast<size_t>(l)];
    w.local_rank = l;
    w.rank = node * nproc + l;
    w.pid = spawn(w, world, nproc, node, worker_args);
    if (w.pid < 0) {
      std::fprintf(stderr, "ddp-train: error: cannot start worker %d: %s\n", l, std::strerror(errno));
      signal_all(ws, SIGKILL);
      for (auto& started : ws)
        if (started.pid > 0) waitpid(started.pid, nullptr, 0);
      return false;
    }
  }
  return true;
}

// Watches the started workers until every one has ended: passes the stop
// signals on, copies their output through, and on the first failure stops
// the others, naming the worker that failed.
class Supervisor {
 public:
  explicit Supervisor(std::vector<Worker>& ws) : ws_(ws), running_(static_cast<int>(ws.size())) {}

  // The launcher's exit status.
  int run() {
    while (running_ > 0) {
      pass_signal();
      forward_output();
      reap();
      if (failure_.empty() && !consequence_.empty() && (running_ == 0 || monotonic_s() > consequence_until_))
        stop_others(consequence_, true);
      if (stopping_) {
        timespec now{};
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > kill_at_.tv_sec) signal_all(ws_, SIGKILL);
      }
    }
    if (!failure_.empty()) return failure_is_peers_ ? kStoppedForPeer : 1;
    for (const auto& w : ws_)
      if (WEXITSTATUS(w.status) == kStoppedForRequeue) return kStoppedForRequeue;
    return 0;
  }

 private:
  void pass_signal() {
    if (!g_signal) return;
    int sig = g_signal;
    g_signal = 0;
    std::fprintf(stderr, "ddp-train: launcher got signal %d; passing it to the workers\n", sig);
    signal_all(ws_, sig);
  }

  // Waits up to 100 ms for output and copies what came.
  void forward_output() {
    std::vector<pollfd> fds;
    std::vector<Worker*> owners;
    for (auto& w : ws_)
      if (w.out_fd >= 0) fds.push_back({w.out_fd, POLLIN, 0}), owners.push_back(&w);
    if (!fds.empty()) {
      int n = poll(fds.data(), fds.size(), 100);
      for (size_t i = 0; n > 0 && i < fds.size(); ++i)
        if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) forward(*owners[i]);
    } else {
      usleep(100 * 1000);
    }
  }

  // The workers that ended since the last look, and the first failure among them.
  void reap() {
    for (auto& w : ws_) {
      if (w.done) continue;
      int status = 0;
      if (waitpid(w.pid, &status, WNOHANG) != w.pid) continue;
      w.done = true;
      w.status = status;
      --running_;
      while (w.out_fd >= 0) forward(w);
      bool ok = WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == kStoppedForRequeue);
      if (ok || !failure_.empty()) continue;
      bool peers = is_consequence(w);
      if (peers && running_ > 0) {
        if (consequence_.empty()) consequence_ = describe(w), consequence_until_ = monotonic_s() + 2;
      } else {
        // The last worker's lost connection, with no failure of its own
        // node before it, is a peer's fault too.
        stop_others(describe(w), peers);
      }
    }
  }

  void stop_others(const std::string& why, bool peers) {
    failure_ = why;
    failure_is_peers_ = peers;
    std::fprintf(stderr, "ddp-train: error: %s%s; stopping the other workers\n", failure_.c_str(),
                 peers ? " (a peer failed first)" : "");
    signal_all(ws_, SIGTERM);
    stopping_ = true;
    clock_gettime(CLOCK_MONOTONIC, &kill_at_);
    kill_at_.tv_sec += 5;
  }

  std::vector<Worker>& ws_;
  int running_;
  std::string failure_;
  // A consequence (a peer's connection lost) waits up to 2 s for the failure
  // that caused it to show, so that the cause is the one named.
  std::string consequence_;
  double consequence_until_ = 0;
  bool stopping_ = false;
  timespec kill_at_{};
  // The failure is only a consequence: this node's worker lost a peer's
  // connection and none of this node's failed on its own.
  bool failure_is_peers_ = false;
};

}  // namespace

int run_launcher(int nproc, const std::vector<std::string>& worker_args) {
  int node = node_rank(), nodes = node_count();
  int world = nodes * nproc;
  catch_signals();
  std::vector<Worker> ws(static_cast<size_t>(nproc));
  if (!start_workers(ws, node, world, worker_args)) return 1;
  std::fprintf(stderr, "ddp-train: node %d of %d: started %d worker(s), ranks %d-%d of %d\n", node, nodes, nproc,
               node * nproc, node * nproc + nproc - 1, world);
  return Supervisor(ws).run();
}

}  // namespace ddptrain
