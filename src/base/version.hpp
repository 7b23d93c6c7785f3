#pragma once
// This build's version and git commit ("0.1.0 (git 1a2b3c4d5e6f)"), for the
// run records (each run says which ddpctl submitted it) and --version.
#include <string>

namespace ddpctl {

std::string ddpctl_version();
// Its parts: "0.1.0" and the commit ("1a2b3c4d5e6f", "-dirty" when built
// from a changed tree).
std::string ddpctl_version_number();
std::string ddpctl_commit();

}  // namespace ddpctl
