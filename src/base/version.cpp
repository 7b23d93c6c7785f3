#include "base/version.hpp"

#include "ddpctl_version.hpp"  // generated at build time (cmake/version.cmake)

namespace ddpctl {

std::string ddpctl_version() { return std::string(DDPCTL_VERSION) + " (git " + DDPCTL_COMMIT + ")"; }
std::string ddpctl_version_number() { return DDPCTL_VERSION; }
std::string ddpctl_commit() { return DDPCTL_COMMIT; }

}  // namespace ddpctl
