#include "base/token.hpp"

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <stdexcept>
#include <sys/random.h>

namespace ddpctl {

std::string new_token() {
  unsigned char bytes[6];
  // The kernel's own (getrandom): no /dev needed, as in a bare chroot or a
  // container without /dev/urandom.
  if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes))
    throw std::runtime_error(std::string("cannot draw a submission token from the kernel (getrandom: ") +
                             std::strerror(errno) + ")");
  std::string hex;
  for (unsigned char b : bytes) hex += fmt::format("{:02x}", b);
  return hex;
}

}  // namespace ddpctl
