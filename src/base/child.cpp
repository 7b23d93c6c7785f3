#include "base/child.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <string>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <unistd.h>

namespace ddpctl {

namespace {
#ifndef __linux__
std::mutex forking;
#endif
}  // namespace

Pipe::Pipe() {
#ifdef __linux__
  if (pipe2(fd, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
#else  // macOS (a user's machine running ddpctl --on): no pipe2; ForkTurn keeps forks out meanwhile
  if (::pipe(fd) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  for (int f : fd) ::fcntl(f, F_SETFD, FD_CLOEXEC);
#endif
}

void Pipe::close_all() {
  for (int& f : fd)
    if (f >= 0) ::close(f), f = -1;
}

#ifdef __linux__
ForkTurn::ForkTurn() {}
void ForkTurn::release() {}
#else
ForkTurn::ForkTurn() : hold_(forking) {}
void ForkTurn::release() {
  if (hold_.owns_lock()) hold_.unlock();
}
#endif

void die_with_parent(int signal, pid_t parent) {
#ifdef __linux__
  ::prctl(PR_SET_PDEATHSIG, signal);
#else
  (void)signal;
#endif
  if (::getppid() != parent) ::_exit(127);  // ddpctl died before prctl
}

[[noreturn]] void exec_or_report(std::vector<char*>& cargv, int status_fd) {
  ::execvp(cargv[0], cargv.data());
  int e = errno;
  ssize_t ignored = ::write(status_fd, &e, sizeof e);
  (void)ignored;
  ::_exit(127);
}

int exec_errno_of(Pipe& exec_status) {
  ::close(exec_status.fd[1]), exec_status.fd[1] = -1;
  int exec_errno = 0;
  ssize_t got;
  while ((got = ::read(exec_status.fd[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
  }
  return got == static_cast<ssize_t>(sizeof exec_errno) ? exec_errno : 0;
}

}  // namespace ddpctl
