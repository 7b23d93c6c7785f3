#include "base/lock.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sys/file.h>
#include <unistd.h>

#include "base/diagnostics.hpp"

namespace ddpctl {

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

std::string this_process() { return fmt::format("pid {} on {}", getpid(), host_name()); }

bool process_alive_here(int pid, const std::string& host) {
  if (pid <= 0 || host != host_name()) return false;
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  return std::getline(comm, name) && name == "ddpctl";
}

FileLock::FileLock(const std::string& path, Clock& clock, const std::function<void(const std::string&)>& on_wait,
                   double notice_after_s) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw UserError(Location{path}, "", std::string("cannot open the lock file: ") + std::strerror(errno));
  double start = clock.monotonic();
  bool told = false;
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) {
      int e = errno;
      ::close(fd_);
      throw UserError(Location{path}, "", std::string("cannot lock: ") + std::strerror(e) +
                                              " (does this file system support flock?)");
    }
    if (!told && clock.monotonic() - start >= notice_after_s) {
      std::ifstream in(path);
      std::string holder;
      std::getline(in, holder);
      on_wait(holder.empty() ? "a process that has not said who it is" : holder);
      told = true;
    }
    clock.sleep(0.02);
  }
  waited_s_ = clock.monotonic() - start;
  std::string me = this_process() + "\n";
  if (::ftruncate(fd_, 0) == 0) {
    ssize_t ignored = ::pwrite(fd_, me.data(), me.size(), 0);
    (void)ignored;
  }
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the lock
}

}  // namespace ddpctl
