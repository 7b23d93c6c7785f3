#include "remote/remote_install.hpp"

#include <cstring>
#ifdef __linux__
#include <elf.h>
#endif
#include <filesystem>
#include <fmt/format.h>
#include <fstream>

#include "base/diagnostics.hpp"
#include "remote/remote.hpp"
#include "base/sha256.hpp"
#include "base/text.hpp"

namespace fs = std::filesystem;

namespace ddpctl {

bool executable_is_static(const std::string& path) {
#ifndef __linux__
  (void)path;
  return false;  // the portable build is Linux's
#else
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr eh{};
  if (!in.read(reinterpret_cast<char*>(&eh), sizeof eh)) return false;
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64) return false;
  if (eh.e_phentsize != sizeof(Elf64_Phdr)) return false;
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    in.seekg(static_cast<std::streamoff>(eh.e_phoff + static_cast<uint64_t>(i) * sizeof ph));
    if (!in.read(reinterpret_cast<char*>(&ph), sizeof ph)) return false;
    if (ph.p_type == PT_INTERP) return false;
  }
  return eh.e_type == ET_EXEC || eh.e_type == ET_DYN;
#endif
}

PortableBuild find_portable_build(const std::string& env_portable, const std::string& self_exe,
                                  const std::string& self_prefix, const std::string& scratch_dir,
                                  CommandRunner& local) {
  std::error_code ec;
  if (!env_portable.empty()) {
    if (!fs::is_regular_file(env_portable, ec))
      throw UserError(Location{"DDPCTL_PORTABLE"}, "",
                      fmt::format("{} is not a file: name the tarball scripts/portable made "
                                  "(ddpctl-VERSION-linux-x86_64.tar.gz)",
                                  env_portable));
    return {env_portable, fmt::format("$DDPCTL_PORTABLE ({})", env_portable)};
  }
  if (!self_exe.empty() && !self_prefix.empty() && executable_is_static(self_exe) &&
      fs::is_directory(self_prefix + "/share/ddpctl", ec)) {
    std::string tarball = scratch_dir + "/ddpctl-portable.tar.gz";
    CommandResult r =
        local.run({"tar", "-czf", tarball, "-C", self_prefix, "bin/ddpctl", "share/ddpctl"}, std::chrono::minutes(2));
    if (!r.ok()) throw UserError(fmt::format("cannot pack this ddpctl ({}) to send it: {}", self_prefix, r.describe()));
    return {tarball, fmt::format("this ddpctl ({})", self_prefix)};
  }
  throw UserError(Location{"--on"}, "",
                  "the login host has no ddpctl of this version, and this ddpctl is not the portable build that "
                  "could be sent there. Set DDPCTL_PORTABLE to this version's portable tarball (scripts/portable: "
                  "ddpctl-VERSION-linux-x86_64.tar.gz), run ddpctl from that tarball here, or install this version "
                  "on the cluster");
}

std::vector<std::string> remote_install_argv(const std::string& folder, const std::string& sha256,
                                             const std::string& version_line) {
  // POSIX sh, one line; sha256sum (GNU coreutils) or shasum (BSD, Perl).
  std::string line =
      "set -e; d=$HOME/.local/share/ddpctl; mkdir -p \"$d\"; t=$(mktemp -d \"$d/.incoming.XXXXXX\"); "
      "trap 'rm -rf \"$t\"' EXIT; cat >\"$t/p.tgz\"; "
      "if command -v sha256sum >/dev/null 2>&1; then got=$(sha256sum \"$t/p.tgz\"); "
      "else got=$(shasum -a 256 \"$t/p.tgz\"); fi; got=${got%% *}; "
      "if [ \"$got\" != \"$2\" ]; then echo \"ddpctl: the portable build arrived damaged (SHA-256 $got, sent $2); "
      "nothing was installed\" >&2; exit 3; fi; "
      "mkdir \"$t/x\"; tar -xzf \"$t/p.tgz\" -C \"$t/x\"; top=$t/x; "
      "if [ ! -x \"$top/bin/ddpctl\" ]; then for c in \"$t\"/x/*; do top=$c; done; fi; "
      "if [ ! -x \"$top/bin/ddpctl\" ]; then echo \"ddpctl: the portable build has no bin/ddpctl\" >&2; exit 3; fi; "
      "v=$(\"$top/bin/ddpctl\" --version 2>&1 | sed -n 1p); "
      "if [ \"$v\" != \"$3\" ]; then echo \"ddpctl: the portable build sent says '$v', not '$3'; nothing was "
      "installed\" >&2; exit 3; fi; "
      "mv -T \"$top\" \"$d/$1\" 2>/dev/null || [ -x \"$d/$1/bin/ddpctl\" ]; echo \"installed=$d/$1/bin/ddpctl\"";
  return {"sh", "-c", line, "sh", folder, sha256, version_line};
}

std::string install_on_remote(SshRunner& ssh, const PortableBuild& build, const std::string& version) {
  const std::string& host = ssh.connection().host;
  std::string sum = sha256_file_hex(build.tarball);
  CommandResult r = ssh.run_with_input(remote_install_argv(install_folder_name(version), sum, "ddpctl " + version),
                                       build.tarball, std::chrono::minutes(5));
  if (!r.ok())
    throw UserError(Location{"--on"}, "",
                    fmt::format("cannot install this version's portable build on {} (from {}): {}", host, build.from,
                                r.connection_failed ? r.err : plain_line(trim(r.err + "\n" + r.out), 400)));
  for (const auto& l : split(r.out, '\n'))
    if (l.rfind("installed=", 0) == 0) return l.substr(10);
  throw UserError(Location{"--on"}, "",
                  fmt::format("installing on {} said nothing of where it went: {}", host, plain_line(r.out, 300)));
}

}  // namespace ddpctl
