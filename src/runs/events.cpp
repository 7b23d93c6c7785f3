#include "runs/events.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <mutex>
#include <string_view>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/diagnostics.hpp"
#include "base/json_document.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace {

struct TypeRow {
  EventType type;
  const char* name;
};
const TypeRow kTypes[] = {
    {EventType::Submitting, "submitting"},
    {EventType::Submitted, "submitted"},
    {EventType::CancelAsked, "cancel_asked"},
    {EventType::RaceWon, "race_won"},
    {EventType::RaceLost, "race_lost"},
    {EventType::Granted, "granted"},
    {EventType::StoodDown, "stood_down"},
    {EventType::RoundOpened, "round_opened"},
    {EventType::Started, "started"},
    {EventType::NodeCheckFailed, "node_check_failed"},
    {EventType::FabricChecked, "fabric_checked"},
    {EventType::NodeExcluded, "node_excluded"},
    {EventType::Stalled, "stalled"},
    {EventType::Straggler, "straggler"},
    {EventType::Restarted, "restarted"},
    {EventType::Preempted, "preempted"},
    {EventType::Requeued, "requeued"},
    {EventType::Resumed, "resumed"},
    {EventType::Progress, "progress"},
    {EventType::Metric, "metric"},
    {EventType::Ended, "ended"},
    {EventType::RunEnded, "run_ended"},
};

struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

std::string iso_of(double t) {
  std::time_t s = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  const int ms = static_cast<int>(std::lround((t - std::floor(t)) * 1000)) % 1000;
  return fmt::format("{}.{:03d}Z", buf, ms);
}

bool write_all(int fd, const std::string& s) {
  for (size_t done = 0; done < s.size();) {
    ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// The last whole line's seq in the open log of `size` bytes, and whether the
// log ends mid-line (a writer died): reads its tail.
long long tail_seq(int fd, long long size, bool& torn) {
  torn = false;
  if (size <= 0) return 0;
  for (long long window = 4096;; window *= 4) {
    const long long from = std::max(0LL, size - window);
    std::string buf(static_cast<size_t>(size - from), '\0');
    if (::pread(fd, buf.data(), buf.size(), from) != static_cast<ssize_t>(buf.size())) return 0;
    torn = buf.back() != '\n';
    // Whole lines, newest first.
    size_t end = torn ? buf.rfind('\n') : buf.size() - 1;
    while (end != std::string::npos && end > 0) {
      size_t start = buf.rfind('\n', end - 1);
      std::string line = buf.substr(start == std::string::npos ? 0 : start + 1,
                                    end - (start == std::string::npos ? 0 : start + 1));
      if (start == std::string::npos && from > 0) break;  // the line may begin before the window
      nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_object() && j.contains("seq") && j["seq"].is_number_integer()) return j["seq"].get<long long>();
      if (start == std::string::npos) return 0;
      end = start;
    }
    if (from == 0) return 0;
  }
}

}  // namespace

const std::vector<EventType>& event_types() {
  static const std::vector<EventType> all = [] {
    std::vector<EventType> v;
    for (const auto& r : kTypes) v.push_back(r.type);
    return v;
  }();
  return all;
}

std::string event_type_name(EventType t) {
  for (const auto& r : kTypes)
    if (r.type == t) return r.name;
  return "";
}

std::optional<EventType> parse_event_type(const std::string& name) {
  for (const auto& r : kTypes)
    if (name == r.name) return r.type;
  return std::nullopt;
}

std::string events_path(const std::string& run_dir) { return run_dir + "/events.ndjson"; }

namespace {
std::mutex g_observers_mutex;
std::map<int, EventObserver>& observers() {
  static std::map<int, EventObserver> all;
  return all;
}
}  // namespace

int add_event_observer(EventObserver observer) {
  std::lock_guard<std::mutex> lock(g_observers_mutex);
  static int next = 0;
  observers()[++next] = std::move(observer);
  return next;
}

void remove_event_observer(int id) {
  std::lock_guard<std::mutex> lock(g_observers_mutex);
  observers().erase(id);
}

double event_now() {
  struct timespec ts {};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}

namespace {

// Under events.lock: the marker of an event written once (once_key), and
// whether it is there already.
std::string once_marker(const std::string& run_dir, const std::string& key) {
  std::string name;
  for (char c : key) name += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' ? c : '_';
  return run_dir + "/events.once/" + name;
}

long long append_locked(const std::string& run_dir, EventType type, const nlohmann::json& fields, double t,
                        const std::string& once_key) {
  const std::string path = events_path(run_dir);
  Fd held(::open((run_dir + "/events.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (held.fd < 0 || ::flock(held.fd, LOCK_EX) != 0)
    throw UserError(Location{run_dir + "/events.lock"}, "", fmt::format("cannot be locked: {}", std::strerror(errno)));
  std::string marker;
  if (!once_key.empty()) {
    marker = once_marker(run_dir, once_key);
    if (::access(marker.c_str(), F_OK) == 0) return 0;
  }
  if (t < 0) t = event_now();  // taken under the lock: times rise with seq
  Fd log(::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  struct stat st {};
  if (log.fd < 0 || ::fstat(log.fd, &st) != 0)
    throw UserError(Location{path}, "", fmt::format("cannot be written: {}", std::strerror(errno)));
  bool torn = false;
  const long long seq = tail_seq(log.fd, st.st_size, torn) + 1;
  nlohmann::json event = {{"schema", json_schema_id("event")}, {"seq", seq},
                          {"time", iso_of(t)},                 {"t", std::round(t * 1000) / 1000},
                          {"type", event_type_name(type)},     {"run", std::filesystem::path(run_dir).filename().string()}};
  if (fields.is_object())
    for (auto it = fields.begin(); it != fields.end(); ++it)
      if (!event.contains(it.key())) event[it.key()] = it.value();
  // One write, the torn line before it ended first: lines never interleave.
  const std::string line = (torn ? "\n" : "") + event.dump() + "\n";
  if (!write_all(log.fd, line))
    throw UserError(Location{path}, "", fmt::format("cannot be written: {}", std::strerror(errno)));
  {
    std::lock_guard<std::mutex> lock(g_observers_mutex);
    for (auto& [id, observer] : observers()) observer(run_dir, event);
  }
  if (!marker.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(run_dir + "/events.once", ec);
    Fd m(::open(marker.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
  }
  return seq;
}

}  // namespace

bool event_written_once(const std::string& run_dir, const std::string& once_key) {
  return ::access(once_marker(run_dir, once_key).c_str(), F_OK) == 0;
}

long long append_event(const std::string& run_dir, EventType type, nlohmann::json fields, double t) {
  return append_locked(run_dir, type, fields, t, "");
}

long long append_event_once(const std::string& run_dir, const std::string& once_key, EventType type,
                            const nlohmann::json& fields, double t) {
  return append_locked(run_dir, type, fields, t, once_key);
}

bool try_append_event(const std::string& run_dir, EventType type, const nlohmann::json& fields, double t) {
  if (run_dir.empty()) return false;
  try {
    append_event(run_dir, type, fields, t);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

EventsRead read_events(const std::string& run_dir, long long from_offset, long long max_bytes) {
  EventsRead r;
  r.next_offset = from_offset;
  Fd log(::open(events_path(run_dir).c_str(), O_RDONLY | O_CLOEXEC));
  if (log.fd < 0) return r;
  std::string buf(static_cast<size_t>(std::max(1LL, max_bytes)), '\0');
  ssize_t got = ::pread(log.fd, buf.data(), buf.size(), from_offset);
  if (got <= 0) return r;
  buf.resize(static_cast<size_t>(got));
  size_t at = 0;
  for (size_t nl = buf.find('\n'); nl != std::string::npos; nl = buf.find('\n', at)) {
    const std::string line = buf.substr(at, nl - at);
    const long long offset = from_offset + static_cast<long long>(at);
    at = nl + 1;
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.contains("seq") && j["seq"].is_number_integer() && j.contains("type")) {
      r.events.push_back(std::move(j));
      r.ends.push_back(from_offset + static_cast<long long>(at));
    }
    else
      r.skipped.push_back(fmt::format("a torn or damaged line at byte {} of {} (a writer that died mid-line?): "
                                      "skipped",
                                      offset, events_path(run_dir)));
  }
  r.next_offset = from_offset + static_cast<long long>(at);
  // A line longer than a whole read is no event a writer made: skipped to
  // its end, so that the reader goes on.
  if (at == 0 && static_cast<long long>(got) >= max_bytes) {
    long long end = from_offset + got;
    for (;;) {
      ssize_t n = ::pread(log.fd, buf.data(), buf.size(), end);
      if (n <= 0) return r;  // not ended yet: read again later
      const size_t nl = std::string_view(buf.data(), static_cast<size_t>(n)).find('\n');
      if (nl != std::string_view::npos) {
        r.skipped.push_back(fmt::format("a line of {} bytes at byte {} of {}: longer than any event, skipped",
                                        end + static_cast<long long>(nl) - from_offset, from_offset,
                                        events_path(run_dir)));
        r.next_offset = end + static_cast<long long>(nl) + 1;
        return r;
      }
      end += n;
    }
  }
  return r;
}

std::optional<long long> offset_after(const std::string& run_dir, long long seq) {
  if (seq == 0) return 0;
  long long offset = 0;
  for (;;) {
    EventsRead r = read_events(run_dir, offset, 4 << 20);
    if (r.next_offset == offset) return std::nullopt;
    // Each event's own end: the offsets are found by reading again line by line.
    long long at = offset;
    Fd log(::open(events_path(run_dir).c_str(), O_RDONLY | O_CLOEXEC));
    std::string buf(static_cast<size_t>(r.next_offset - offset), '\0');
    if (log.fd < 0 || ::pread(log.fd, buf.data(), buf.size(), offset) != static_cast<ssize_t>(buf.size()))
      return std::nullopt;
    for (size_t pos = 0, nl; (nl = buf.find('\n', pos)) != std::string::npos; pos = nl + 1) {
      at = offset + static_cast<long long>(nl) + 1;
      nlohmann::json j = nlohmann::json::parse(buf.substr(pos, nl - pos), nullptr, false);
      if (j.is_object() && j.contains("seq") && j["seq"].is_number_integer()) {
        long long s = j["seq"].get<long long>();
        if (s == seq) return at;
        if (s > seq) return std::nullopt;
      }
    }
    offset = r.next_offset;
  }
}

long long last_event_seq(const std::string& run_dir) {
  Fd log(::open(events_path(run_dir).c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st {};
  if (log.fd < 0 || ::fstat(log.fd, &st) != 0) return 0;
  bool torn = false;
  return tail_seq(log.fd, st.st_size, torn);
}

namespace {

const char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string base64url(const std::string& in) {
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8) |
                       static_cast<unsigned char>(in[i + 2]);
    out += {kB64[(v >> 18) & 63], kB64[(v >> 12) & 63], kB64[(v >> 6) & 63], kB64[v & 63]};
  }
  if (i + 1 == in.size()) {
    const unsigned v = static_cast<unsigned char>(in[i]) << 16;
    out += {kB64[(v >> 18) & 63], kB64[(v >> 12) & 63]};
  } else if (i + 2 == in.size()) {
    const unsigned v = (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8);
    out += {kB64[(v >> 18) & 63], kB64[(v >> 12) & 63], kB64[(v >> 6) & 63]};
  }
  return out;
}

std::optional<std::string> unbase64url(const std::string& in) {
  std::string out;
  unsigned v = 0;
  int bits = 0;
  for (char c : in) {
    const char* p = std::strchr(kB64, c);
    if (!p || c == '\0') return std::nullopt;
    v = (v << 6) | static_cast<unsigned>(p - kB64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((v >> bits) & 0xff);
    }
  }
  return out;
}

}  // namespace

long long event_log_origin(const std::string& run_dir) {
  EventsRead r = read_events(run_dir, 0, 64 << 10);
  if (r.events.empty()) return 0;
  return std::llround(r.events.front().value("t", 0.0) * 1000);
}

std::string encode_cursor(const EventCursor& c) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [run, p] : c) j[run] = {p.seq, p.offset, p.origin};
  return "c1." + base64url(j.dump());
}

EventCursor decode_cursor(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return UserError(Location{"--since"}, "",
                     fmt::format("{}: {} (a cursor is what `ddpctl events` printed on a line, or `start`)",
                                 printable(text, 80), why));
  };
  if (text.rfind("c1.", 0) != 0) throw bad("not a cursor of ddpctl events");
  std::optional<std::string> raw = unbase64url(text.substr(3));
  nlohmann::json j = raw ? nlohmann::json::parse(*raw, nullptr, false) : nlohmann::json();
  if (!j.is_object()) throw bad("not a cursor of ddpctl events (damaged?)");
  EventCursor c;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const auto& v = it.value();
    if (!v.is_array() || v.size() != 3 || !v[0].is_number_integer() || !v[1].is_number_integer() ||
        !v[2].is_number_integer() || v[0].get<long long>() < 0 || v[1].get<long long>() < 0)
      throw bad("not a cursor of ddpctl events (damaged?)");
    c[it.key()] = {v[0].get<long long>(), v[1].get<long long>(), v[2].get<long long>()};
  }
  return c;
}

}  // namespace ddpctl
