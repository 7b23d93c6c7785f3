#pragma once
// An exclusive lock on a file, held while a FileLock lives: flock(2), which
// the kernel releases when the holder exits or is killed, so a crash never
// leaves a stale lock. On Linux NFS clients (v4, and v3 with lockd) flock is
// carried out as a POSIX byte-range lock on the server, so ddpctls on
// different login nodes sharing a runs folder exclude each other too
// (docs/runs.md, "Concurrent ddpctls").
#include <functional>
#include <string>

#include "base/clock.hpp"

namespace ddpctl {

class FileLock {
 public:
  // Takes the lock on `path`, creating the file (and its folder) if missing,
  // and waits as long as another process holds it. After `notice_after_s`
  // of waiting, `on_wait` is called once with what the holder wrote into the
  // file ("pid 1234 on login1"). The holder's line is written once taken.
  FileLock(const std::string& path, Clock& clock, const std::function<void(const std::string& holder)>& on_wait,
           double notice_after_s = 1.0);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  double waited_s() const { return waited_s_; }

 private:
  int fd_ = -1;
  double waited_s_ = 0;
};

// "pid 1234 on login1": who this process is, as lock files and ledgers record it.
std::string this_process();
// Whether the process a ledger or lock names (pid on this host) still runs
// as a ddpctl; false for another host's or a gone one.
bool process_alive_here(int pid, const std::string& host);
std::string host_name();

}  // namespace ddpctl
