#include "agent/master_port.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/process.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace {

struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

// Milliseconds from now to `until` (monotonic), for poll().
int ms_until(double until, Clock& clock) { return static_cast<int>(std::max(0.0, until - clock.monotonic()) * 1000); }

// Reads up to a newline (or `max` bytes) before `until` (monotonic).
std::optional<std::string> read_line(int fd, double until, Clock& clock, size_t max = 256) {
  std::string line;
  while (line.size() < max) {
    int wait = ms_until(until, clock);
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, wait) <= 0) return std::nullopt;
    char c;
    ssize_t n = ::recv(fd, &c, 1, 0);
    if (n <= 0) return line.empty() ? std::nullopt : std::optional<std::string>(line);
    if (c == '\n') return line;
    line += c;
  }
  return line;
}

std::optional<sockaddr_in> ipv4(const std::string& addr, int port) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  if (::inet_pton(AF_INET, addr.c_str(), &sa.sin_addr) == 1) return sa;
#ifdef DDPCTL_STATIC
  // A static glibc cannot load the node's name services (NSS): the node's
  // own getent resolves the name as every program there would.
  SystemCommandRunner runner;
  CommandResult r = runner.run({"getent", "ahostsv4", addr}, std::chrono::seconds(10));
  std::string first = r.ok() ? r.out.substr(0, r.out.find_first_of(" \t\n")) : "";
  if (!first.empty() && ::inet_pton(AF_INET, first.c_str(), &sa.sin_addr) == 1) return sa;
  return std::nullopt;
#else
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  if (::getaddrinfo(addr.c_str(), nullptr, &hints, &res) != 0 || !res) return std::nullopt;
  sa.sin_addr = reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr;
  ::freeaddrinfo(res);
  return sa;
#endif
}

}  // namespace

std::optional<std::string> reach_listener(const std::string& addr, int port, const std::string& self, double deadline_s,
                                          Clock& clock) {
  double start = clock.monotonic(), until = start + deadline_s;
  auto sa = ipv4(addr, port);
  if (!sa) return fmt::format("cannot resolve {}", addr);
  std::string last = "no answer";
  while (clock.monotonic() < until) {
    Fd s(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (s.fd < 0) return std::string("socket: ") + std::strerror(errno);
    int rc = ::connect(s.fd, reinterpret_cast<sockaddr*>(&*sa), sizeof *sa);
    int err = rc == 0 ? 0 : errno;
    if (rc != 0 && err == EINPROGRESS) {
      pollfd p{s.fd, POLLOUT, 0};
      int n = ::poll(&p, 1, ms_until(until, clock));
      if (n <= 0) {
        last = fmt::format("connection timed out after {:.0f}s", clock.monotonic() - start);
        break;
      }
      socklen_t len = sizeof err;
      ::getsockopt(s.fd, SOL_SOCKET, SO_ERROR, &err, &len);
    }
    if (err == 0) {
      std::string hello = self + "\n";
      if (::send(s.fd, hello.data(), hello.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(hello.size())) {
        auto answer = read_line(s.fd, std::min(until, clock.monotonic() + 5), clock);
        if (answer && *answer == "ok") return std::nullopt;  // closed first here: TIME_WAIT stays on this side
        last = answer ? "the listener answered " + printable(*answer) : "the listener did not answer";
      } else {
        last = std::string("send: ") + std::strerror(errno);
      }
    } else {
      // Refused: the listener may not be up yet. Anything else may pass too.
      last = std::strerror(err);
      for (char& c : last) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    clock.sleep(0.2);
  }
  return last;
}

ListenResult listen_for_peers(int port, int peers, double deadline_s, Clock& clock,
                              const std::function<void(int)>& on_listening) {
  ListenResult r;
  Fd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (s.fd < 0) {
    r.problem = std::string("socket: ") + std::strerror(errno);
    return r;
  }
  int one = 1;
  ::setsockopt(s.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  sa.sin_addr.s_addr = htonl(INADDR_ANY);
  if (::bind(s.fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(s.fd, 64) != 0) {
    r.problem = fmt::format("cannot listen on port {}: {}", port, std::strerror(errno));
    return r;
  }
  socklen_t len = sizeof sa;
  ::getsockname(s.fd, reinterpret_cast<sockaddr*>(&sa), &len);
  r.port = ntohs(sa.sin_port);
  if (on_listening) on_listening(r.port);
  double until = clock.monotonic() + deadline_s;
  while (static_cast<int>(r.connected.size()) < peers && clock.monotonic() < until) {
    pollfd p{s.fd, POLLIN, 0};
    if (::poll(&p, 1, ms_until(until, clock)) <= 0) break;
    Fd c(::accept4(s.fd, nullptr, nullptr, SOCK_CLOEXEC));
    if (c.fd < 0) continue;
    auto name = read_line(c.fd, std::min(until, clock.monotonic() + 5), clock);
    if (!name) continue;
    ::send(c.fd, "ok\n", 3, MSG_NOSIGNAL);
    // The peer closes first, so that no TIME_WAIT holds the master port here.
    char buf[16];
    pollfd q{c.fd, POLLIN, 0};
    if (::poll(&q, 1, 2000) > 0) (void)::recv(c.fd, buf, sizeof buf, 0);
    r.connected.push_back(*name);
  }
  return r;
}

}  // namespace ddpctl
