#include "base/process.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <stdexcept>
#include <thread>
#include <sys/wait.h>
#include <unistd.h>

#include "base/child.hpp"
#include "base/diagnostics.hpp"
#include "base/text.hpp"

extern char** environ;

namespace ddpctl {

namespace {

// A command whose stdout or stderr passes this is stopped (output_cut): no
// Slurm answer ddpctl reads is near it, a command that floods must not
// exhaust memory, and an answer cut short must never pass for a whole one.
constexpr size_t kMaxCapture = 64u << 20;

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

// Where the child's stdout goes: into result.out (at most kMaxCapture), or
// into `fd` within `bound` (run_to_file).
struct StdoutSink {
  int fd = -1;
  const StdoutBound* bound = nullptr;
  long long written = 0, limit = -1;
  bool limited = false;  // `limit` was set from the stream's first line (or there is none to wait for)
  std::string head;      // the first bytes, until the first line is whole
};

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return false;
    p += w, n -= static_cast<size_t>(w);
  }
  return true;
}

// Takes `got` bytes of stdout into the file; false when the bound is passed
// (or the first line refused, or the file cannot be written): stop.
bool take_into_file(StdoutSink& sink, const char* buf, size_t got, CommandResult& result) {
  if (!sink.limited) {
    sink.head.append(buf, std::min<size_t>(got, 512));
    if (sink.head.find('\n') != std::string::npos || sink.head.size() >= 256 || !sink.bound->from_first_line) {
      sink.limit = stdout_limit(*sink.bound, sink.head);
      sink.limited = true;
      if (sink.limit == -2) {
        result.output_cut = true;
        result.err += (result.err.empty() ? "" : "\n") + std::string("its answer does not begin with the size line asked for");
        return false;
      }
    } else {
      sink.limit = sink.bound->max_bytes;
    }
  }
  if (sink.limit >= 0 && sink.written + static_cast<long long>(got) > sink.limit) {
    result.output_cut = true;
    return false;
  }
  if (!write_all(sink.fd, buf, got)) {
    result.err += fmt::format("{}cannot write its answer here: {}", result.err.empty() ? "" : "\n", std::strerror(errno));
    result.output_cut = true;
    return false;
  }
  sink.written += static_cast<long long>(got);
  return true;
}

// Reads the child's stdout and stderr until both close (stdout into
// result.out, or into the file of `sink`); kills its process group when
// `timeout` passes (timed_out) or when one says more than it may
// (output_cut).
void capture(pid_t pid, const Pipe& out, const Pipe& err, std::chrono::milliseconds timeout, CommandResult& result,
             StdoutSink* sink = nullptr) {
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
      if (got > 0 && i == 0 && sink) {
        if (!take_into_file(*sink, buf, static_cast<size_t>(got), result)) {
          ::kill(-pid, SIGKILL);
          break;
        }
      } else if (got > 0) {
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

namespace {

CommandResult run_captured(const std::vector<std::string>& argv, std::chrono::milliseconds timeout, StdoutSink* sink) {
  CommandResult result;
  result.argv = argv;
  if (argv.empty()) throw std::logic_error("CommandRunner::run: empty argv");

  ForkTurn turn;
  Pipe out, err, exec_status;  // exec_status: the child's errno if exec fails
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(fmt::format("cannot start {}: {}", argv[0], std::strerror(errno)));
  if (pid == 0) exec_captured(cargv, out, err, exec_status, parent);
  turn.release();
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
  capture(pid, out, err, timeout, result, sink);
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

}  // namespace

CommandResult SystemCommandRunner::run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  return run_captured(argv, timeout, nullptr);
}

CommandResult SystemCommandRunner::run_to_file(const std::vector<std::string>& argv, const std::string& file,
                                               std::chrono::milliseconds timeout, const StdoutBound& bound) {
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw UserError(Location{file}, "", fmt::format("cannot be written: {}", std::strerror(errno)));
  StdoutSink sink;
  sink.fd = fd;
  sink.bound = &bound;
  CommandResult r;
  try {
    r = run_captured(argv, timeout, &sink);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0 && r.ok()) {
    r.err += fmt::format("cannot write its answer here: {}", std::strerror(errno));
    r.exit_code = -1;
  }
  return r;
}

long long stdout_limit(const StdoutBound& bound, const std::string& head) {
  if (!bound.from_first_line) return bound.max_bytes;
  size_t nl = head.find('\n');
  long long limit = bound.from_first_line(head.substr(0, nl == std::string::npos ? std::min<size_t>(head.size(), 256) : nl));
  if (limit < 0) return -2;
  return bound.max_bytes >= 0 ? std::min(limit, bound.max_bytes) : limit;
}

CommandResult CommandRunner::run_to_file(const std::vector<std::string>& argv, const std::string& file,
                                         std::chrono::milliseconds timeout, const StdoutBound& bound) {
  CommandResult r = run(argv, timeout);
  long long limit = stdout_limit(bound, r.out.substr(0, 512));
  std::string out = std::move(r.out);
  r.out.clear();
  if (limit == -2 || (limit >= 0 && static_cast<long long>(out.size()) > limit)) {
    r.output_cut = true;
    r.exit_code = -1;
    if (limit == -2) r.err += "its answer does not begin with the size line asked for";
    out.resize(limit == -2 ? 0 : static_cast<size_t>(limit));
  }
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0 || !write_all(fd, out.data(), out.size()))
    throw UserError(Location{file}, "", fmt::format("cannot be written: {}", std::strerror(errno)));
  ::close(fd);
  return r;
}

}  // namespace ddpctl
