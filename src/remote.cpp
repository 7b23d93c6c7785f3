#include "remote.hpp"

#include <fmt/format.h>

#include "diagnostics.hpp"
#include "text.hpp"

namespace ddpctl {

std::string install_folder_name(const std::string& version) {
  // "0.1.0 (git 1a2b3c4d5e6f-dirty)" -> "0.1.0-1a2b3c4d5e6f-dirty"
  std::string out;
  for (char c : version) {
    if (c == ' ') {
      if (!out.empty() && out.back() != '-') out += '-';
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') {
      out += c;
    }
  }
  const std::string git = "-git-";
  if (size_t at = out.find(git); at != std::string::npos) out.replace(at, git.size(), "-");
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

std::vector<std::string> remote_probe_argv(const std::string& version) {
  std::string bin = "$HOME/.local/share/ddpctl/" + install_folder_name(version) + "/bin/ddpctl";
  // One line for sh: the user's login shell runs `sh -c LINE` whatever it is.
  std::string line =
      "echo \"home=$HOME\"; echo \"system=$(uname -sm)\"; "
      "p=$(command -v ddpctl 2>/dev/null); echo \"ddpctl=$p\"; "
      "if [ -n \"$p\" ]; then echo \"ddpctl_version=$(\"$p\" --version 2>/dev/null | sed -n 1p)\"; fi; "
      "i=\"" + bin + "\"; "
      "if [ -x \"$i\" ]; then echo \"installed=$i\"; echo \"installed_version=$(\"$i\" --version 2>/dev/null | sed -n 1p)\"; fi";
  return {"sh", "-c", line};
}

RemoteSide parse_remote_probe(const std::string& out) {
  RemoteSide s;
  bool home = false;
  for (const auto& l : split(out, '\n')) {
    size_t eq = l.find('=');
    if (eq == std::string::npos) continue;
    std::string key = l.substr(0, eq), value = l.substr(eq + 1);
    if (key == "home") s.home = value, home = true;
    else if (key == "system") s.system = value;
    else if (key == "ddpctl") s.ddpctl = value;
    else if (key == "ddpctl_version") s.ddpctl_version = value;
    else if (key == "installed") s.installed = value;
    else if (key == "installed_version") s.installed_version = value;
  }
  if (!home || s.home.empty())
    throw UserError(fmt::format("the login host's answer is not ddpctl's probe (no home= line): {}", plain_line(out, 300)));
  return s;
}

RemoteSide probe_remote(CommandRunner& ssh, const std::string& host, const std::string& version) {
  CommandResult r = ssh.run(remote_probe_argv(version), std::chrono::seconds(30));
  if (!r.ok()) throw UserError(fmt::format("cannot ask {} which ddpctl it has: {}", host, r.describe()));
  return parse_remote_probe(r.out);
}

RemoteDdpctl choose_remote_ddpctl(const RemoteSide& side, const std::string& version) {
  const std::string want = "ddpctl " + version;
  RemoteDdpctl d;
  if (!side.ddpctl.empty() && side.ddpctl_version == want) {
    d.use = RemoteDdpctl::Use::Cluster;
    d.path = side.ddpctl;
    d.text = fmt::format("the cluster's {}, the same version ({})", side.ddpctl, version);
    return d;
  }
  std::string theirs = side.ddpctl.empty() ? "no ddpctl on the PATH"
                       : side.ddpctl_version.empty()
                           ? fmt::format("{} does not say its version", side.ddpctl)
                           : fmt::format("{} is {}", side.ddpctl, side.ddpctl_version.substr(side.ddpctl_version.rfind("ddpctl ", 0) == 0 ? 7 : 0));
  if (!side.installed.empty() && side.installed_version == want) {
    d.use = RemoteDdpctl::Use::Installed;
    d.path = side.installed;
    d.text = fmt::format("{}, this version, installed there by ddpctl ({})", side.installed, theirs);
    return d;
  }
  d.path = side.home + "/.local/share/ddpctl/" + install_folder_name(version) + "/bin/ddpctl";
  if (side.system != "Linux x86_64") {
    d.use = RemoteDdpctl::Use::Cannot;
    d.text = fmt::format("none of this version ({}), and the portable build is for Linux x86_64, not {}: install "
                         "ddpctl {} on the cluster",
                         theirs, side.system.empty() ? "an unknown system" : side.system, version);
    return d;
  }
  d.use = RemoteDdpctl::Use::Install;
  d.text = fmt::format("none of this version ({}): jobs submitted from here need this version's portable build at {}",
                       theirs, d.path);
  return d;
}

}  // namespace ddpctl
