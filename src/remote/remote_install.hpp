#pragma once
// Installing this version's portable build on a login host that lacks it
// (docs/remote.md "Which ddpctl the jobs run"): the static ddpctl and its
// data, sent over the connection ddpctl already holds, checked by SHA-256
// there before anything of it runs, and unpacked under the user's home as
// ~/.local/share/ddpctl/<version>-<commit>/ (remote.hpp's install folder),
// moved into place in one rename so that a dropped connection or two
// ddpctls at once leave either no install or a whole one.
#include <string>
#include <vector>

#include "base/process.hpp"
#include "base/ssh.hpp"

namespace ddpctl {

// Whether the ELF executable at `path` is statically linked (no program
// interpreter): the portable build is. False for anything else, and off Linux.
bool executable_is_static(const std::string& path);

// The portable build to send: a tarball of scripts/portable.
struct PortableBuild {
  std::string tarball;  // a .tar.gz whose bin/ddpctl (at its top or one folder down) is the static ddpctl
  std::string from;     // "$DDPCTL_PORTABLE (...)", "this ddpctl (/home/alice/.local/opt/ddpctl-0.1.0)"
};
// $DDPCTL_PORTABLE when set (a tarball scripts/portable made); else this
// ddpctl itself when it is the static portable build installed with its
// data (`self_exe`, `self_prefix`: its binary and the prefix holding
// bin/ddpctl and share/ddpctl), packed into `scratch_dir`; else a UserError
// that says how to get one.
PortableBuild find_portable_build(const std::string& env_portable, const std::string& self_exe,
                                  const std::string& self_prefix, const std::string& scratch_dir,
                                  CommandRunner& local);

// The login host's sh line that takes the tarball on stdin, checks its
// SHA-256, unpacks it, checks that its ddpctl says `version_line`, and moves
// it to ~/.local/share/ddpctl/<folder>; it prints installed=<path>.
std::vector<std::string> remote_install_argv(const std::string& folder, const std::string& sha256,
                                             const std::string& version_line);

// Sends `build` through `ssh` (one call) and returns the installed ddpctl's
// path there; a UserError naming the host and what went wrong otherwise.
std::string install_on_remote(SshRunner& ssh, const PortableBuild& build, const std::string& version);

}  // namespace ddpctl
