#include "base/sized_stream.hpp"

#include <fmt/format.h>
#include <sys/statvfs.h>

#include "base/text.hpp"

namespace ddpctl {

namespace {
constexpr long long kKeepFree = 256LL << 20;
}  // namespace

long long free_bytes(const std::string& folder) {
  struct statvfs st {};
  if (::statvfs(folder.c_str(), &st) != 0) return -1;
  return static_cast<long long>(st.f_bavail) * static_cast<long long>(st.f_frsize);
}

std::optional<long long> declared_size(const std::string& line, const std::string& word) {
  if (line.size() <= word.size() + 1 || line.compare(0, word.size() + 1, word + " ") != 0) return std::nullopt;
  std::string n = line.substr(word.size() + 1);
  if (!n.empty() && n.back() == '\r') return std::nullopt;
  if (n.empty() || n.size() > 15 || n.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoll(n);
}

long long with_growth(long long declared) { return declared + declared / 4 + (64LL << 20); }

StdoutBound sized_stream_bound(const std::string& word, const std::string& folder, std::string& why) {
  StdoutBound b;
  b.from_first_line = [word, folder, &why](const std::string& line) -> long long {
    std::optional<long long> n = declared_size(line, word);
    if (!n) {
      why = fmt::format("its answer does not begin with its size (\"{} BYTES\"), but with {}", word,
                        printable(line, 30));
      return -1;
    }
    const long long most = with_growth(*n) + static_cast<long long>(line.size()) + 1;
    const long long free = free_bytes(folder);
    if (free >= 0 && *n + kKeepFree > free) {
      why = fmt::format("it declares {}, and {} has {} free (ddpctl keeps {} free)", format_bytes(*n), folder,
                        format_bytes(free), format_bytes(kKeepFree));
      return -1;
    }
    why = fmt::format("it sent more than the {} it declared (and room for growth: {} in all)", format_bytes(*n),
                      format_bytes(most));
    return free >= 0 ? std::min(most, std::max(0LL, free - kKeepFree)) : most;
  };
  return b;
}

std::string size_line(const std::string& word, long long bytes) { return fmt::format("{} {}\n", word, bytes); }

}  // namespace ddpctl
