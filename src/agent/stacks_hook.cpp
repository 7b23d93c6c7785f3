#include "agent/stacks_hook.hpp"

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#include "base/files.hpp"
#include "agent/flight_recorder_pipe.hpp"
#include "runs/job_files.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace {

constexpr std::string_view kMemfdName = "memfd:ddpctl-stacks-sig";

// Python 3.8+ (os.memfd_create, os.register_at_fork); an older one, or any
// error, registers nothing and the program runs as it would without this.
constexpr std::string_view kHook = R"py(# ddpctl's stacks hook (docs/running.md "Who hung the job"), first on the
# job's PYTHONPATH: the watchdog asks each Python rank for every thread's
# stack with signal @SIGNAL@, which Python's faulthandler answers into an
# anonymous in-memory file (memfd) that ddpctl reads through /proc. Silent
# until asked: no output, no file. A signal the process does not leave at its
# default is not taken; when the program sets its own handler for it later,
# this steps aside first. Then the sitecustomize that would have run without
# this one runs (Debian's, the user's).


def _ddpctl_stacks_hook(sig):
    import faulthandler
    import os
    import signal

    if not hasattr(os, "memfd_create") or signal.getsignal(sig) != signal.SIG_DFL:
        return
    held = []

    def take():
        fd = os.memfd_create("ddpctl-stacks-sig%d" % sig)  # close-on-exec
        try:
            faulthandler.register(sig, file=fd, all_threads=True, chain=False)
        except Exception:
            os.close(fd)
            return
        held.append(fd)

    def step_aside():
        if held:
            faulthandler.unregister(sig)
            os.close(held.pop())

    def in_child():
        # A forked child (a DataLoader worker) answers for itself, into a
        # file of its own: the parent's is shared with it.
        if held:
            step_aside()
            take()

    take()
    if not held:
        return
    os.register_at_fork(after_in_child=in_child)
    original = signal.signal

    def signal_(signalnum, handler):
        if signalnum == sig:
            step_aside()
        return original(signalnum, handler)

    signal_.__doc__, signal_.__name__, signal_.__qualname__ = original.__doc__, original.__name__, original.__qualname__
    signal.signal = signal_


def _ddpctl_next_sitecustomize():
    import importlib.machinery
    import importlib.util
    import os
    import sys

    here = os.path.realpath(os.path.dirname(os.path.abspath(__file__)))
    rest = [p for p in sys.path if os.path.realpath(os.path.abspath(p or os.curdir)) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)
@FLIGHT_RECORDER@

try:
    _ddpctl_stacks_hook(@SIGNAL@)
except Exception:
    pass
try:
    _ddpctl_flight_recorder()
except Exception:
    pass
_ddpctl_next_sitecustomize()
)py";

long long file_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<long long>(st.st_size) : -1;
}

std::string read_from(const std::string& path, long long offset) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(offset);
  std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  constexpr size_t kMax = 4 << 20;  // a dump of thousands of threads is still far less
  if (out.size() > kMax) out.resize(kMax);
  return out;
}

// The hook's memfd among the process's open files: its fd's path and signal.
std::optional<std::pair<std::string, int>> find_hook(const std::string& proc_root, int pid) {
  std::string dir = fmt::format("{}/{}/fd", proc_root, pid);
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code lec;
    auto target = std::filesystem::read_symlink(it->path(), lec);
    if (lec) continue;
    if (auto sig = hook_signal_of_link(target.string())) return std::make_pair(it->path().string(), *sig);
  }
  return std::nullopt;
}

bool mask_has(const std::string& status_text, std::string_view field, int sig) {
  for (const auto& line : split(status_text, '\n')) {
    if (line.rfind(field, 0) != 0 || line.size() <= field.size() || line[field.size()] != ':') continue;
    std::string hex = trim(line.substr(field.size() + 1));
    int bit = sig - 1;
    int digit = static_cast<int>(hex.size()) - 1 - bit / 4;
    if (digit < 0) return false;
    char c = hex[static_cast<size_t>(digit)];
    int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 0;
    return (v >> (bit % 4)) & 1;
  }
  return false;
}

}  // namespace

int stacks_signal() { return SIGRTMIN + 8; }

std::string python_hook_text(int sig) {
  std::string text(kHook);
  for (size_t at; (at = text.find("@SIGNAL@")) != std::string::npos;) text.replace(at, 8, std::to_string(sig));
  // The Flight Recorder's pipe for ranks without NCCL (flight_recorder_pipe.hpp).
  if (size_t at = text.find("@FLIGHT_RECORDER@\n"); at != std::string::npos) text.replace(at, 18, python_fr_hook_text());
  return text;
}

std::string write_python_hook(const std::string& log_base) {
  std::string dir = job_files::python_hook(log_base);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  write_file_atomic(dir + "/sitecustomize.py", python_hook_text(stacks_signal()));
  return dir;
}

std::optional<int> hook_signal_of_link(const std::string& link) {
  size_t at = link.find(kMemfdName);
  if (at == std::string::npos || (at > 0 && link[at - 1] != '/')) return std::nullopt;
  std::string rest = link.substr(at + kMemfdName.size());
  size_t digits = 0;
  while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') digits++;
  if (digits == 0 || digits > 3 || (digits < rest.size() && rest[digits] != ' ')) return std::nullopt;
  int sig = std::stoi(rest.substr(0, digits));
  if (sig < 1 || sig > 64) return std::nullopt;
  return sig;
}

bool signal_caught(const std::string& status_text, int sig) {
  return mask_has(status_text, "SigCgt", sig) && !mask_has(status_text, "SigIgn", sig) &&
         !mask_has(status_text, "SigBlk", sig);
}

std::string describe_hook_dump(const HookDump& d) {
  switch (d.outcome) {
    case HookOutcome::Dumped: return fmt::format("faulthandler (signal {})", d.signal);
    case HookOutcome::NotRegistered:
      return "it did not register for faulthandler (not Python, or started without ddpctl's sitecustomize)";
    case HookOutcome::NotCaught:
      return fmt::format("it registered for faulthandler, but signal {} is not caught now: not sent", d.signal);
    case HookOutcome::NotSent: return fmt::format("signal {} could not be sent to it", d.signal);
    case HookOutcome::NoAnswer: return fmt::format("no faulthandler dump after signal {}", d.signal);
  }
  return "";
}

std::vector<HookDump> ask_python_stacks(const std::string& proc_root, const std::vector<int>& pids, Clock& clock,
                                        double wait_s, const std::function<bool(int pid, int sig)>& send) {
  struct Asked {
    size_t index;
    std::string path;
    long long before = 0, last = -1;
    double stable_since = 0;
    bool done = false;
  };
  std::vector<HookDump> out;
  std::vector<Asked> asked;
  for (int pid : pids) {
    HookDump d;
    d.pid = pid;
    if (auto hook = find_hook(proc_root, pid)) {
      d.signal = hook->second;
      std::string status;
      try {
        status = read_file(fmt::format("{}/{}/status", proc_root, pid), 64 << 10);
      } catch (const std::exception&) {
      }
      long long before = file_size(hook->first);
      if (!signal_caught(status, d.signal)) d.outcome = HookOutcome::NotCaught;
      else if (before < 0 || !send(pid, d.signal)) d.outcome = HookOutcome::NotSent;
      else {
        d.outcome = HookOutcome::NoAnswer;
        asked.push_back({out.size(), hook->first, before});
      }
    }
    out.push_back(d);
  }
  // Complete: grown, then unchanged for a moment (the handler writes it all at once).
  constexpr double kSettle = 0.2, kPoll = 0.05;
  double until = clock.monotonic() + wait_s;
  while (std::any_of(asked.begin(), asked.end(), [](const Asked& a) { return !a.done; })) {
    double now = clock.monotonic();
    for (auto& a : asked) {
      if (a.done) continue;
      long long size = file_size(a.path);
      if (size <= a.before) continue;
      if (size != a.last) {
        a.last = size, a.stable_since = now;
      } else if (now - a.stable_since >= kSettle) {
        out[a.index].text = read_from(a.path, a.before);
        out[a.index].outcome = HookOutcome::Dumped;
        a.done = true;
      }
    }
    if (now >= until) break;
    clock.sleep(kPoll);
  }
  for (auto& a : asked)  // a dump still being written when the time ran out: what there is
    if (!a.done && file_size(a.path) > a.before) {
      out[a.index].text = read_from(a.path, a.before);
      out[a.index].outcome = HookOutcome::Dumped;
    }
  return out;
}

}  // namespace ddpctl
