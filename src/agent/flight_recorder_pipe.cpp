#include "agent/flight_recorder_pipe.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/regex.hpp"
#include "base/text.hpp"

namespace ddpctl {

std::string fr_pipe_path(const std::string& stem, int rank) { return fmt::format("{}{}.pipe", stem, rank); }
std::string fr_dump_path(const std::string& prefix, int rank) { return fmt::format("{}{}", prefix, rank); }

std::string pipe_ask_name(PipeAsk a) {
  switch (a) {
    case PipeAsk::Asked: return "asked";
    case PipeAsk::NoPipe: return "no pipe";
    case PipeAsk::NoReader: return "no reader";
    case PipeAsk::NotAPipe: return "not a pipe";
    case PipeAsk::Failed: return "failed";
  }
  return "failed";
}

PipeAsk ask_dump_pipe(const std::string& path, std::string* why) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return PipeAsk::NoPipe;
    if (why) *why = std::strerror(errno);
    return PipeAsk::Failed;
  }
  if (!S_ISFIFO(st.st_mode)) return PipeAsk::NotAPipe;
  // Non-blocking: with no reader the open fails (ENXIO) instead of waiting for one.
  int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENXIO) return PipeAsk::NoReader;
    if (errno == ENOENT) return PipeAsk::NoPipe;
    if (why) *why = std::strerror(errno);
    return PipeAsk::Failed;
  }
  struct stat opened {};
  if (::fstat(fd, &opened) != 0 || !S_ISFIFO(opened.st_mode)) {
    ::close(fd);
    return PipeAsk::NotAPipe;
  }
  ssize_t n;
  do n = ::write(fd, "x", 1);
  while (n < 0 && errno == EINTR);
  int err = errno;
  ::close(fd);
  // A full pipe holds earlier requests not yet read: the rank is asked all the same.
  if (n == 1 || (n < 0 && err == EAGAIN)) return PipeAsk::Asked;
  if (why) *why = n < 0 ? std::strerror(err) : "nothing written";
  return PipeAsk::Failed;
}

std::string fr_asks_section(const std::string& stem, const std::vector<FrAsk>& asks) {
  std::string out = fmt::format("\n## flight recorder: dump pipes {}N.pipe\n", stem);
  for (const auto& a : asks) out += fmt::format("rank {}: {}\n", a.rank, pipe_ask_name(a.outcome));
  return out;
}

std::vector<FrAsk> read_fr_asks(const std::string& stacks_text, const std::string& node) {
  static const Regex line_re(R"re(^rank (\d+): (asked|no pipe|no reader|not a pipe|failed)$)re");
  std::vector<FrAsk> out;
  bool in = false;
  for (const auto& line : split(stacks_text, '\n')) {
    if (line.rfind("## ", 0) == 0) {
      in = line.rfind("## flight recorder:", 0) == 0;
      continue;
    }
    RegexMatch m;
    if (!in || !line_re.search(line, &m)) continue;
    FrAsk a;
    a.rank = std::stoi(m.str(1));
    a.node = node;
    for (PipeAsk k : {PipeAsk::Asked, PipeAsk::NoPipe, PipeAsk::NoReader, PipeAsk::NotAPipe, PipeAsk::Failed})
      if (pipe_ask_name(k) == m.str(2)) a.outcome = k;
    out.push_back(a);
  }
  return out;
}

namespace {

// Python 3.8+. Every step is guarded: any error leaves the program as it
// would run without this (no output, no exception).
constexpr std::string_view kPythonHook = R"py(

def _ddpctl_flight_recorder():
    # torch.distributed's Flight Recorder on demand (docs/running.md "Flight
    # Recorder"): ProcessGroupNCCL dumps when a byte is written to its pipe
    # (TORCH_NCCL_DEBUG_INFO_PIPE_FILE<rank>.pipe); other backends (Gloo)
    # record into the same recorder but have no pipe. This thread gives them
    # one, dumping into TORCH_FR_DUMP_TEMP_FILE<rank> as NCCL does. It waits
    # for the process group, and steps aside where it has NCCL.
    import os
    import threading

    stem = os.environ.get("TORCH_NCCL_DEBUG_INFO_PIPE_FILE", "")
    prefix = os.environ.get("TORCH_FR_DUMP_TEMP_FILE") or os.environ.get("TORCH_NCCL_DEBUG_INFO_TEMP_FILE") or ""
    if not stem or not prefix or not os.environ.get("RANK") or not hasattr(os, "mkfifo"):
        return

    def pipe_of(rank):
        path = "%s%d.pipe" % (stem, rank)
        try:
            # A pipe someone reads (torch's own, for an NCCL group made
            # since) is left alone; a stale one (an earlier process) is replaced.
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            return None
        except OSError:
            pass
        try:
            if os.path.lexists(path):
                os.unlink(path)
            os.mkfifo(path, 0o600)
            # Read and write: a read waits for a request, never for a writer.
            return os.open(path, os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            return None

    def serve():
        import sys
        import time

        while True:
            time.sleep(2)
            dist = sys.modules.get("torch.distributed")
            try:
                if dist is not None and dist.is_available() and dist.is_initialized():
                    break
            except Exception:
                pass  # torch.distributed is still being imported
        try:
            dump = sys.modules["torch"]._C._distributed_c10d._dump_fr_trace
            if "nccl" in str(dist.get_backend()).lower():
                return
            rank = dist.get_rank()
        except Exception:
            return
        fd = pipe_of(rank)
        if fd is None:
            return
        # A forked child (a data loader worker) is not the rank.
        os.register_at_fork(after_in_child=lambda: os.close(fd))
        target = "%s%d" % (prefix, rank)
        failed = target + ".error"  # why this ask got no dump, for the watchdog
        while True:
            try:
                if not os.read(fd, 128):
                    return
                if os.path.lexists(failed):
                    os.unlink(failed)  # an earlier ask's
                # The first dump imports torch._inductor for the stacks (2 s of CPU).
                data = dump()
                part = "%s.part%d" % (target, os.getpid())
                with open(part, "wb") as f:
                    f.write(data)
                os.replace(part, target)  # whole, or not there
            except Exception as e:
                try:
                    with open(failed, "w") as f:
                        f.write("%s: %s\n" % (type(e).__name__, e))
                except Exception:
                    pass
                time.sleep(1)

    threading.Thread(target=serve, name="ddpctl-flight-recorder", daemon=True).start()
)py";

}  // namespace

FileId file_id(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return {};
  return {static_cast<long long>(st.st_size),
          static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec,
          static_cast<long long>(st.st_ino)};
}

std::string python_fr_hook_text() { return std::string(kPythonHook); }

std::map<int, FileId> existing_dumps(const std::string& prefix) {
  std::map<int, FileId> out;
  size_t slash = prefix.rfind('/');
  std::string dir = slash == std::string::npos ? "." : prefix.substr(0, slash);
  std::string stem = slash == std::string::npos ? prefix : prefix.substr(slash + 1);
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.size() <= stem.size() || name.compare(0, stem.size(), stem) != 0) continue;
    std::string digits = name.substr(stem.size());
    if (digits.size() > 7 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    int rank = std::stoi(digits);
    out[rank] = file_id(fr_dump_path(prefix, rank));
  }
  ::closedir(d);
  return out;
}

}  // namespace ddpctl
