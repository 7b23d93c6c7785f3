#include "base/tar_archive.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

#include "base/diagnostics.hpp"
#include "base/text.hpp"

namespace fs = std::filesystem;

namespace ddpctl {

namespace {

constexpr long long kBlock = 512;
// A GNU long name or link, and a member's pax records: far past any path
// (PATH_MAX is 4096), small enough to hold in memory.
constexpr long long kMaxExtension = 1 << 20;

struct Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

// Up to n bytes at `at`: fewer only at the end of the file; -1 on an error.
long long read_at(int fd, long long at, char* buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd, buf + got, n - got, static_cast<off_t>(at + static_cast<long long>(got)));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return static_cast<long long>(got);
}

long long padded(long long size) { return (size + kBlock - 1) / kBlock * kBlock; }

// A header's number: octal digits between spaces and NULs, or GNU's
// base-256 (the first byte's top bit set; negative ones are refused).
std::optional<long long> number(const char* field, size_t n) {
  const auto* u = reinterpret_cast<const unsigned char*>(field);
  long long v = 0;
  if (u[0] & 0x80) {
    if (u[0] & 0x40) return std::nullopt;
    v = u[0] & 0x3f;
    for (size_t i = 1; i < n; ++i) {
      if (v > (LLONG_MAX >> 8)) return std::nullopt;
      v = (v << 8) | u[i];
    }
    return v;
  }
  size_t i = 0;
  while (i < n && field[i] == ' ') ++i;
  for (; i < n && field[i] >= '0' && field[i] <= '7'; ++i) {
    if (v > (LLONG_MAX >> 3)) return std::nullopt;
    v = v * 8 + (field[i] - '0');
  }
  for (; i < n; ++i)
    if (field[i] != ' ' && field[i] != '\0') return std::nullopt;
  return v;
}

std::string text_field(const char* field, size_t n) { return std::string(field, strnlen(field, n)); }

// The stored checksum against the header's bytes, its own field as spaces
// (unsigned, or signed as some old tars summed).
bool checksum_ok(const char* h) {
  auto stored = number(h + 148, 8);
  long long u = 0, s = 0;
  for (int i = 0; i < kBlock; ++i) {
    char c = (i >= 148 && i < 156) ? ' ' : h[i];
    u += static_cast<unsigned char>(c);
    s += static_cast<signed char>(c);
  }
  return stored && (*stored == u || *stored == s);
}

// pax records, "LEN KEY=VALUE\n" each, into `out` (an empty value takes the
// key back); false when one is malformed.
bool read_pax(const std::string& data, std::map<std::string, std::string>& out) {
  for (size_t at = 0; at < data.size();) {
    size_t len = 0, i = at;
    for (; i < data.size() && data[i] >= '0' && data[i] <= '9' && len < (1u << 24); ++i) len = len * 10 + (data[i] - '0');
    if (i == at || i >= data.size() || data[i] != ' ' || len <= i - at || at + len > data.size() ||
        data[at + len - 1] != '\n')
      return false;
    std::string record = data.substr(i + 1, at + len - 1 - (i + 1));
    size_t eq = record.find('=');
    if (eq == std::string::npos) return false;
    std::string key = record.substr(0, eq), value = record.substr(eq + 1);
    if (value.empty()) out.erase(key);
    else out[key] = value;
    at += len;
  }
  return true;
}

std::optional<long long> pax_number(const std::map<std::string, std::string>& pax, const char* key) {
  auto it = pax.find(key);
  if (it == pax.end()) return std::nullopt;
  std::string digits = it->second.substr(0, it->second.find('.'));  // mtime may have a fraction
  if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return std::stoll(digits);
}

TarMember::Type type_of(char flag) {
  switch (flag) {
    case '0': case '\0': case '7': return TarMember::Type::File;
    case '1': return TarMember::Type::HardLink;
    case '2': return TarMember::Type::SymbolicLink;
    case '3': return TarMember::Type::CharDevice;
    case '4': return TarMember::Type::BlockDevice;
    case '5': return TarMember::Type::Folder;
    case '6': return TarMember::Type::Fifo;
    default: return TarMember::Type::Other;
  }
}

// What the extension headers before a member said of it.
struct Extensions {
  std::map<std::string, std::string> pax;
  std::optional<std::string> long_name, long_link;
};

// The member a header (and the extensions before it) describes; "" or why not.
std::string member_of(const char* h, const Extensions& ext, TarMember& m) {
  auto size = number(h + 124, 12), mode = number(h + 100, 8), mtime = number(h + 136, 12);
  if (!size || !mode || !mtime) return "a tar header with a number that is not one";
  m.flag = h[156];
  m.type = type_of(m.flag);
  m.mode = static_cast<unsigned>(*mode & 07777);
  m.size = *size;
  m.mtime = *mtime;
  const bool posix = std::memcmp(h + 257, "ustar\0", 6) == 0;
  std::string prefix = posix ? text_field(h + 345, 155) : "";
  m.name = prefix.empty() ? text_field(h, 100) : prefix + "/" + text_field(h, 100);
  m.link = text_field(h + 157, 100);
  if (ext.long_name) m.name = *ext.long_name;
  if (ext.long_link) m.link = *ext.long_link;
  if (auto it = ext.pax.find("path"); it != ext.pax.end()) m.name = it->second;
  if (auto it = ext.pax.find("linkpath"); it != ext.pax.end()) m.link = it->second;
  for (auto [key, value] : {std::pair{"size", &m.size}, std::pair{"mtime", &m.mtime}})
    if (auto n = pax_number(ext.pax, key)) {
      if (*n < 0) return fmt::format("a pax record of {} that is not a number", key);
      *value = *n;
    }
  for (const auto& kv : ext.pax)
    if (kv.first.rfind("GNU.sparse.", 0) == 0) m.type = TarMember::Type::Other, m.flag = 'S';
  if (m.type == TarMember::Type::Folder)
    while (m.name.size() > 1 && m.name.back() == '/') m.name.pop_back();
  return "";
}

}  // namespace

std::string describe_tar_type(const TarMember& m) {
  switch (m.type) {
    case TarMember::Type::File: return "a file";
    case TarMember::Type::Folder: return "a folder";
    case TarMember::Type::HardLink: return "a hard link to " + printable(m.link);
    case TarMember::Type::SymbolicLink: return "a symbolic link to " + printable(m.link);
    case TarMember::Type::CharDevice: return "a character device";
    case TarMember::Type::BlockDevice: return "a block device";
    case TarMember::Type::Fifo: return "a fifo";
    case TarMember::Type::Other: break;
  }
  if (m.flag == 'S') return "a sparse file";
  return "a member of tar type " + printable(std::string(1, m.flag));
}

TarListing read_tar_members(const std::string& path, long long start) {
  TarListing l;
  Fd in(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st {};
  if (in.fd < 0 || ::fstat(in.fd, &st) != 0) {
    l.problem = fmt::format("cannot be read: {}", std::strerror(errno));
    return l;
  }
  const long long file_size = st.st_size;
  long long at = start;
  auto fail = [&](const std::string& why) {
    l.members.clear();
    l.problem = fmt::format("{} (at byte {})", why, at);
    return l;
  };
  Extensions ext;
  char h[kBlock];
  for (;;) {
    long long got = read_at(in.fd, at, h, kBlock);
    if (got < 0) return fail(fmt::format("cannot be read: {}", std::strerror(errno)));
    if (got == 0) return fail("cut short: it ends without tar's end-of-archive blocks");
    if (got < kBlock) return fail("cut short in a header");
    if (std::all_of(h, h + kBlock, [](char c) { return c == '\0'; })) return l;  // the end
    if (!checksum_ok(h)) return fail("not a tar header (its checksum is wrong)");
    TarMember m;
    if (std::string why = member_of(h, ext, m); !why.empty()) return fail(why);
    m.offset = at + kBlock;
    const bool has_data = m.type == TarMember::Type::File || m.type == TarMember::Type::Other;
    const long long data = has_data || m.flag == 'L' || m.flag == 'K' || m.flag == 'x' || m.flag == 'g' ? m.size : 0;
    if (data > file_size || m.offset + padded(data) > file_size)
      return fail(fmt::format("cut short in the data of {}", printable(m.name)));
    if (m.flag == 'L' || m.flag == 'K' || m.flag == 'x' || m.flag == 'g') {
      if (data > kMaxExtension) return fail(fmt::format("a tar extension header of {} bytes", data));
      std::string text(static_cast<size_t>(data), '\0');
      if (read_at(in.fd, m.offset, text.data(), text.size()) != data) return fail("cut short in an extension header");
      if (m.flag == 'L') ext.long_name = text.substr(0, text.find('\0'));
      if (m.flag == 'K') ext.long_link = text.substr(0, text.find('\0'));
      std::map<std::string, std::string> global;  // 'g': for all members after; ddpctl needs none of it
      if ((m.flag == 'x' || m.flag == 'g') && !read_pax(text, m.flag == 'x' ? ext.pax : global))
        return fail("a malformed pax header");
    } else {
      l.members.push_back(std::move(m));
      ext = Extensions();
    }
    at += kBlock + padded(data);
  }
}

std::optional<std::string> tar_name_problem(const std::string& name) {
  if (name.empty()) return "an empty name";
  if (name[0] == '/') return "an absolute name";
  if (name.size() > 4096) return "a name longer than 4096 bytes";
  if (find_invalid_utf8(name)) return "a name that is not UTF-8";
  if (find_control_char(name)) return "a name with a control character";
  for (const auto& part : split(name, '/')) {
    if (part.empty()) return "a name with an empty component";
    if (part == "." || part == "..") return fmt::format("a name with a '{}' component", part);
  }
  return std::nullopt;
}

std::optional<std::string> tar_link_problem(const TarMember& m) {
  const std::string& t = m.link;
  if (t.empty()) return "a symbolic link to nothing";
  if (t[0] == '/') return "a symbolic link to an absolute path (" + printable(t) + ")";
  if (t.size() > 4096 || find_invalid_utf8(t) || find_control_char(t))
    return "a symbolic link whose target is not plain text (" + printable(t) + ")";
  // Where it points from the folder the link stands in, by names alone.
  std::vector<std::string> at = split(m.name, '/');
  at.pop_back();
  for (const auto& part : split(t, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (at.empty()) return "a symbolic link out of the folder (" + printable(t) + ")";
      at.pop_back();
    } else {
      at.push_back(part);
    }
  }
  if (at.empty()) return "a symbolic link to the folder itself (" + printable(t) + ")";
  return std::nullopt;
}

void unpack_tar_members(const std::string& path, const std::vector<TarMember>& members, const std::string& dest,
                        const std::string& what) {
  Fd in(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (in.fd < 0) throw UserError(Location{path}, "", fmt::format("cannot be read: {}", std::strerror(errno)));
  const mode_t mask = ::umask(0);
  ::umask(mask);
  std::vector<char> buf(1 << 20);
  std::vector<const TarMember*> links;
  for (const auto& m : members) {
    const fs::path to = fs::path(dest) / m.name;
    std::error_code ec;
    auto cannot = [&](const std::string& why) {
      return UserError(Location{to.string()}, "", fmt::format("cannot write {}: {}", what, why));
    };
    if (m.type == TarMember::Type::SymbolicLink) {
      links.push_back(&m);
      continue;
    }
    if (m.type != TarMember::Type::File && m.type != TarMember::Type::Folder)
      throw std::logic_error("unpack_tar_members: " + describe_tar_type(m));
    fs::create_directories(m.type == TarMember::Type::Folder ? to : to.parent_path(), ec);
    if (ec) throw cannot(ec.message());
    if (m.type == TarMember::Type::Folder) continue;
    Fd out(::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (out.fd < 0) throw cannot(std::strerror(errno));
    for (long long done = 0; done < m.size;) {
      size_t n = static_cast<size_t>(std::min<long long>(m.size - done, static_cast<long long>(buf.size())));
      long long got = read_at(in.fd, m.offset + done, buf.data(), n);
      if (got != static_cast<long long>(n)) throw UserError(Location{path}, "", "cannot be read to its end");
      for (size_t w = 0; w < n;) {
        ssize_t r = ::write(out.fd, buf.data() + w, n - w);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) throw cannot(std::strerror(errno));
        w += static_cast<size_t>(r);
      }
      done += static_cast<long long>(n);
    }
    if (::fchmod(out.fd, ((m.mode & S_IXUSR) ? 0777 : 0666) & ~mask) != 0) throw cannot(std::strerror(errno));
    struct timespec times[2] = {{0, UTIME_OMIT}, {static_cast<time_t>(m.mtime), 0}};
    ::futimens(out.fd, times);
    if (::close(out.fd) != 0) {
      out.fd = -1;
      throw cannot(std::strerror(errno));
    }
    out.fd = -1;
  }
  for (const TarMember* m : links) {
    const fs::path to = fs::path(dest) / m->name;
    std::error_code ec;
    fs::create_directories(to.parent_path(), ec);
    if (ec || ::symlink(m->link.c_str(), to.c_str()) != 0)
      throw UserError(Location{to.string()}, "",
                      fmt::format("cannot write {}: {}", what, ec ? ec.message() : std::strerror(errno)));
  }
}

}  // namespace ddpctl
