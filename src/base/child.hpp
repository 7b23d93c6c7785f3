#pragma once
// Starting a child process safely, for the process runner (process.hpp)
// and the foreground runner (foreground.hpp): its pipes close on exec, it
// dies with ddpctl, and an exec that fails is told to the parent. Forks from
// several threads at once (the coordinator asks its sites at once) are safe
// where pipes are made close-on-exec atomically (Linux); elsewhere pipes
// and forks take turns (ForkTurn).
#include <mutex>
#include <sys/types.h>
#include <vector>

namespace ddpctl {

// A pipe whose both ends close on exec, and with this object.
struct Pipe {
  int fd[2] = {-1, -1};
  Pipe();
  ~Pipe() { close_all(); }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  void close_all();
};

// Held from making a child's pipes until it is forked, where making a pipe
// close-on-exec takes two calls (not Linux): a fork between them in another
// thread would keep its end open in that child.
class ForkTurn {
 public:
  ForkTurn();
  void release();

 private:
  std::unique_lock<std::mutex> hold_;
};

// In a child before exec: dies with ddpctl (Linux; elsewhere the child
// outlives a killed ddpctl), and not at all if ddpctl died already.
void die_with_parent(int signal, pid_t parent);

// In the child, after its setup: exec argv; when that fails, the errno goes
// to the parent through `status_fd` and the child exits 127.
[[noreturn]] void exec_or_report(std::vector<char*>& cargv, int status_fd);

// In the parent: the child's exec errno, 0 when the exec succeeded (the
// close-on-exec pipe closed without a word).
int exec_errno_of(Pipe& exec_status);

}  // namespace ddpctl
