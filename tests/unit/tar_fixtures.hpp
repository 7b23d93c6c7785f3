#pragma once
// Tar archives as a hostile host may write them, byte by byte (tests only):
// what GNU tar would not make (devices without root, '..' names, a member
// cut short) for the reader and for fetch's checks.
#include <fmt/format.h>
#include <string>

namespace ddpctl::test {

// One ustar member: its header, checksum right, and its data in 512-byte
// blocks. `size`: the header's size field where it should lie.
inline std::string tar_member(const std::string& name, char type, const std::string& data = "", unsigned mode = 0644,
                              const std::string& link = "", long long size = -1) {
  std::string h(512, '\0');
  auto put = [&](size_t at, const std::string& s) { h.replace(at, s.size(), s); };
  put(0, name.substr(0, 100));
  put(100, fmt::format("{:07o}", mode));
  put(108, "0000000");
  put(116, "0000000");
  put(124, fmt::format("{:011o}", size < 0 ? static_cast<long long>(data.size()) : size));
  put(136, "14712345670");
  put(148, "        ");
  h[156] = type;
  put(157, link.substr(0, 100));
  put(257, std::string("ustar\0" "00", 8));
  unsigned sum = 0;
  for (unsigned char c : h) sum += c;
  put(148, fmt::format("{:06o}", sum) + std::string(1, '\0') + " ");
  return h + data + std::string((512 - data.size() % 512) % 512, '\0');
}

// tar's end-of-archive: two blocks of zeros.
inline std::string tar_end() { return std::string(1024, '\0'); }

}  // namespace ddpctl::test
