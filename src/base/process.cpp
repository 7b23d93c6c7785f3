#include "base/process.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <thread>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

#include "base/diagnostics.hpp"
#include "base/text.hpp"

extern char** environ;

namespace ddpctl {

namespace {

// A command whose stdout or stderr passes this is stopped (output_cut): no
// Slurm answer ddpctl reads is near it, a command that floods must not
// exhaust memory, and an answer cut short must never pass for a whole one.
constexpr size_t kMaxCapture = 64u << 20;

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
#ifdef __linux__
    if (pipe2(fd, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
#else  // macOS (a user's machine running ddpctl --on): no pipe2; ddpctl starts no threads that fork meanwhile
    if (::pipe(fd) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    for (int f : fd) ::fcntl(f, F_SETFD, FD_CLOEXEC);
#endif
  }
  ~Pipe() { close_all(); }
  void close_all() {
    for (int& f : fd)
      if (f >= 0) ::close(f), f = -1;
  }
};

// In a child before exec: dies with ddpctl (Linux; elsewhere the child
// outlives a killed ddpctl), and not at all if ddpctl died already.
void die_with_parent(int signal, pid_t parent) {
#ifdef __linux__
  ::prctl(PR_SET_PDEATHSIG, signal);
#else
  (void)signal;
#endif
  if (::getppid() != parent) ::_exit(127);  // ddpctl died before prctl
}

std::string first_line(const std::string& s) {
  size_t start = s.find_first_not_of(" \n");
  if (start == std::string::npos) return "";
  size_t end = s.find('\n', start);
  return plain_line(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
}

}  // namespace

// The program run: argv[0], or after `env VAR=VALUE ...` the program env
// runs (git with its GIT_INDEX_FILE is git, not env).
static std::string program_of(const std::vector<std::string>& argv) {
  if (argv.empty()) return "command";
  size_t i = 0;
  if (argv[0] == "env")
    for (i = 1; i < argv.size() && argv[i].find('=') != std::string::npos && argv[i][0] != '-';) ++i;
  return i < argv.size() ? argv[i] : argv[0];
}

std::string CommandResult::describe() const {
  std::string name = program_of(argv);
  if (not_found) return fmt::format("'{}' was not found on PATH", name);
  std::string what;
  if (connection_failed)
    return fmt::format("{} could not be run or did not answer: {}", name, first_line(err));
  if (output_cut)
    return fmt::format("{} printed more than {} on {}, more than ddpctl keeps of a command's output, and was stopped",
                       name, format_bytes(static_cast<long long>(kMaxCapture)),
                       out.size() >= kMaxCapture ? "stdout" : "stderr");
  if (timed_out)
    what = fmt::format("{} did not finish in time and was stopped", name);
  else if (term_signal != 0)
    what = fmt::format("{} was killed by signal {}", name, term_signal);
  else
    what = fmt::format("{} exited with status {}", name, exit_code);
  std::string detail = first_line(err);
  if (detail.empty()) detail = first_line(out);
  return detail.empty() ? what : what + ": " + detail;
}

std::string CommandResult::describe_whole() const {
  std::string first = describe();
  const std::string& said = first_line(err).empty() ? out : err;
  std::vector<std::string> lines;
  size_t start = said.find_first_not_of(" \n");
  for (size_t pos = start; pos != std::string::npos && pos < said.size();) {
    size_t end = said.find('\n', pos);
    lines.push_back(plain_line(said.substr(pos, end == std::string::npos ? std::string::npos : end - pos)));
    pos = end == std::string::npos ? end : end + 1;
  }
  while (!lines.empty() && trim(lines.back()).empty()) lines.pop_back();
  if (lines.size() <= 1 || not_found || connection_failed || output_cut) return first;
  // describe() holds the first line; the rest follow it, indented, so
  // that nothing the command said is lost (at most kWholeLines of them).
  constexpr size_t kWholeLines = 40;
  for (size_t i = 1; i < lines.size() && i <= kWholeLines; ++i) first += "\n  " + lines[i];
  if (lines.size() > kWholeLines + 1) first += fmt::format("\n  ... and {} more lines", lines.size() - kWholeLines - 1);
  return first;
}

namespace {

// In the child, after its setup: exec argv; when that fails, the errno goes
// to the parent through `status_fd` and the child exits 127.
[[noreturn]] void exec_or_report(std::vector<char*>& cargv, int status_fd) {
  ::execvp(cargv[0], cargv.data());
  int e = errno;
  ssize_t ignored = ::write(status_fd, &e, sizeof e);
  (void)ignored;
  ::_exit(127);
}

// In the parent: the child's exec errno, 0 when the exec succeeded (the
// close-on-exec pipe closed without a word).
int exec_errno_of(Pipe& exec_status) {
  ::close(exec_status.fd[1]), exec_status.fd[1] = -1;
  int exec_errno = 0;
  ssize_t got;
  while ((got = ::read(exec_status.fd[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
  }
  return got == static_cast<ssize_t>(sizeof exec_errno) ? exec_errno : 0;
}

}  // namespace

int run_in_foreground(const std::vector<std::string>& argv) {
  if (argv.empty()) throw std::logic_error("run_in_foreground: empty argv");
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  struct sigaction ignore {}, old_int {}, old_quit {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGINT, &ignore, &old_int);
  ::sigaction(SIGQUIT, &ignore, &old_quit);
  const pid_t parent = ::getpid();
  Pipe exec_status;
  pid_t pid = ::fork();
  if (pid < 0) {
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGQUIT, &old_quit, nullptr);
    throw UserError(fmt::format("cannot start {}: {}", argv[0], std::strerror(errno)));
  }
  if (pid == 0) {
    die_with_parent(SIGTERM, parent);
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGQUIT, &old_quit, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    exec_or_report(cargv, exec_status.fd[1]);
  }
  int exec_errno = exec_errno_of(exec_status);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGQUIT, &old_quit, nullptr);
  if (exec_errno != 0) throw UserError(fmt::format("cannot start {}: {}", argv[0], std::strerror(exec_errno)));
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

namespace {

// The child of SystemCommandRunner::run, after fork: only async-signal-safe
// calls until exec. Its own process group, so that a timeout can stop it and
// its children; and killed with ddpctl, so that a ddpctl killed or
// interrupted during sbatch leaves no sbatch behind to submit later (the
// ledger's intent is settled by the next submit).
[[noreturn]] void exec_captured(std::vector<char*>& cargv, const Pipe& out, const Pipe& err, const Pipe& exec_status,
                                pid_t parent) {
  ::setpgid(0, 0);
  die_with_parent(SIGKILL, parent);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::signal(SIGPIPE, SIG_DFL);
  int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) ::dup2(devnull, 0);
  ::dup2(out.fd[1], 1);
  ::dup2(err.fd[1], 2);
  exec_or_report(cargv, exec_status.fd[1]);
}

// Reads the child's stdout and stderr into `result` until both close; kills
// its process group when `timeout` passes (timed_out) or when one says more
// than kMaxCapture (output_cut).
void capture(pid_t pid, const Pipe& out, const Pipe& err, std::chrono::milliseconds timeout, CommandResult& result) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  pollfd fds[2] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0 && !result.output_cut) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    int n = ::poll(fds, 2, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        size_t room = kMaxCapture - sinks[i]->size();
        sinks[i]->append(buf, std::min(room, static_cast<size_t>(got)));
        if (static_cast<size_t>(got) > room) {
          result.output_cut = true;
          ::kill(-pid, SIGKILL);
          break;
        }
      } else if (got == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
}

}  // namespace

CommandResult SystemCommandRunner::run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  CommandResult result;
  result.argv = argv;
  if (argv.empty()) throw std::logic_error("CommandRunner::run: empty argv");

  Pipe out, err, exec_status;  // exec_status: the child's errno if exec fails
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(fmt::format("cannot start {}: {}", argv[0], std::strerror(errno)));
  if (pid == 0) exec_captured(cargv, out, err, exec_status, parent);
  if (int exec_errno = exec_errno_of(exec_status); exec_errno != 0) {
    int ignored_status = 0;
    while (::waitpid(pid, &ignored_status, 0) < 0 && errno == EINTR) {
    }
    if (exec_errno == ENOENT || exec_errno == EACCES || exec_errno == ENOTDIR) {
      result.not_found = true;
      return result;
    }
    throw std::runtime_error(fmt::format("cannot start {}: {}", argv[0], std::strerror(exec_errno)));
  }
  ::close(out.fd[1]), out.fd[1] = -1;
  ::close(err.fd[1]), err.fd[1] = -1;
  capture(pid, out, err, timeout, result);
  int status = 0;
  if (result.timed_out || result.output_cut) {
    // A process in uninterruptible sleep (nvidia-smi on a GPU that fell off
    // the bus) outlives SIGKILL: wait a few seconds, then leave it rather
    // than hang with it.
    for (int i = 0; i < 50; ++i) {
      pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == pid || (r < 0 && errno != EINTR)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return result;
  }
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && !result.timed_out) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status) && !result.timed_out) result.term_signal = WTERMSIG(status);
  return result;
}

}  // namespace ddpctl
