#include "remote/remote.hpp"

#include <cctype>
#include <stdexcept>
#include <fmt/format.h>

#include "base/diagnostics.hpp"
#include "base/text.hpp"

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

const char* const kRemoteDirSh =
    "d=$1; case $d in \"~\") d=$HOME ;; \"~/\"*) d=$HOME/${d#\"~/\"} ;; esac; ";

std::vector<std::string> remote_probe_argv(const std::string& version, const std::string& dir_word,
                                           const std::string& runs, const std::string& snapshot_id) {
  std::string bin = "$HOME/.local/share/ddpctl/" + install_folder_name(version) + "/bin/ddpctl";
  // One line for sh: the user's login shell runs `sh -c LINE` whatever it is.
  std::string line =
      "echo \"home=$HOME\"; echo \"system=$(uname -sm)\"; "
      "p=$(command -v ddpctl 2>/dev/null); echo \"ddpctl=$p\"; "
      "if [ -n \"$p\" ]; then echo \"ddpctl_version=$(\"$p\" --version 2>/dev/null | sed -n 1p)\"; fi; "
      "i=\"" + bin + "\"; "
      "if [ -x \"$i\" ]; then echo \"installed=$i\"; echo \"installed_version=$(\"$i\" --version 2>/dev/null | sed -n 1p)\"; fi";
  if (dir_word.empty()) return {"sh", "-c", line};
  line += std::string("; ") + kRemoteDirSh +
          "echo \"dir=$d\"; if [ -n \"$3\" ] && [ -d \"$d/$2/.snapshots/$3\" ]; then echo snapshot=present; fi";
  return {"sh", "-c", line, "sh", dir_word, runs.empty() ? "runs" : runs, snapshot_id};
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
    else if (key == "dir") s.dir = value;
    else if (key == "snapshot") s.snapshot_present = value == "present";
  }
  if (!home || s.home.empty())
    throw UserError(fmt::format("the login host's answer is not ddpctl's probe (no home= line): {}", plain_line(out, 300)));
  return s;
}

RemoteSide probe_remote(CommandRunner& ssh, const std::string& host, const std::string& version,
                        const std::string& dir_word, const std::string& runs, const std::string& snapshot_id) {
  CommandResult r = ssh.run(remote_probe_argv(version, dir_word, runs, snapshot_id), std::chrono::seconds(30));
  if (!r.ok()) throw UserError(fmt::format("cannot ask {} which ddpctl it has: {}", host, r.describe()));
  return parse_remote_probe(r.out);
}

namespace {
// What the login host said, as a message shows it: its control characters
// (a terminal's escape sequences) made harmless.
std::string said(const std::string& text) { return plain_line(text, 300); }
}  // namespace

RemoteDdpctl choose_remote_ddpctl(const RemoteSide& side, const std::string& version) {
  const std::string want = "ddpctl " + version;
  RemoteDdpctl d;
  if (!side.ddpctl.empty() && side.ddpctl_version == want) {
    d.use = RemoteDdpctl::Use::Cluster;
    d.path = side.ddpctl;
    d.text = fmt::format("the cluster's {}, the same version ({})", said(side.ddpctl), version);
    return d;
  }
  std::string theirs =
      side.ddpctl.empty()                ? "no ddpctl on the PATH"
      : side.ddpctl_version.empty()      ? fmt::format("{} does not say its version", said(side.ddpctl))
                                         : fmt::format("{} is {}", said(side.ddpctl),
                                                       said(side.ddpctl_version.substr(
                                                           side.ddpctl_version.rfind("ddpctl ", 0) == 0 ? 7 : 0)));
  if (!side.installed.empty() && side.installed_version == want) {
    d.use = RemoteDdpctl::Use::Installed;
    d.path = side.installed;
    d.text = fmt::format("{}, this version, installed there by ddpctl ({})", said(side.installed), theirs);
    return d;
  }
  d.path = side.home + "/.local/share/ddpctl/" + install_folder_name(version) + "/bin/ddpctl";
  if (side.system != "Linux x86_64") {
    d.use = RemoteDdpctl::Use::Cannot;
    d.text = fmt::format("none of this version ({}), and the portable build is for Linux x86_64, not {}: install "
                         "ddpctl {} on the cluster",
                         theirs, side.system.empty() ? "an unknown system" : said(side.system), version);
    return d;
  }
  d.use = RemoteDdpctl::Use::Install;
  d.text = fmt::format("none of this version ({}): jobs submitted from here need this version's portable build at {}",
                       theirs, said(d.path));
  return d;
}

std::string remote_project_dir(const std::string& cwd, const std::string& local_home, const std::string& remote_home,
                               const std::string& option) {
  std::string word = remote_dir_word(cwd, local_home, option);
  if (word == "~") return remote_home;
  if (word.rfind("~/", 0) == 0) return remote_home + word.substr(1);
  return word;
}

std::string remote_dir_word(const std::string& cwd, const std::string& local_home, const std::string& option) {
  if (!option.empty()) {
    if (option[0] == '/') return option;
    std::string rel = option.rfind("~/", 0) == 0 ? option.substr(2) : option == "~" ? "" : option;
    return rel.empty() ? "~" : "~/" + rel;
  }
  std::string home = local_home;
  while (home.size() > 1 && home.back() == '/') home.pop_back();
  if (!home.empty() && home != "/" && cwd.rfind(home + "/", 0) == 0) return "~" + cwd.substr(home.size());
  if (!home.empty() && cwd == home) return "~";
  throw UserError(Location{"--remote-dir"}, "",
                  fmt::format("{} is not under your home here ({}), so ddpctl cannot tell which folder on the login "
                              "host it is: name it with --remote-dir (the folder whose runs/ holds the runs)",
                              cwd, local_home.empty() ? "$HOME is not set" : local_home));
}

std::vector<std::string> remote_ddpctl_argv(const std::string& host, const std::string& dir, const std::string& ddpctl,
                                            const std::vector<std::string>& words) {
  std::vector<std::string> argv = {
      "sh", "-c",
      "cd -- \"$1\" 2>/dev/null || { echo \"ddpctl: error: --on $0: there is no folder $1 there; --remote-dir names the "
      "folder to run in (the one whose runs/ holds the runs)\" >&2; exit 1; }; shift; exec \"$@\"",
      host, dir, ddpctl};
  argv.insert(argv.end(), words.begin(), words.end());
  return argv;
}

std::vector<std::string> without_taken_options(const std::vector<std::string>& words,
                                               const std::vector<TakenOption>& taken) {
  std::vector<bool> drop(words.size(), false);
  for (const TakenOption& t : taken) {
    // `--on=HOST` is the one word that ends it; otherwise `--on` (or
    // `--on=`, an empty value: the parser then takes the next word) and HOST.
    bool one_word = t.end >= 1 && t.end <= words.size() && words[t.end - 1] == t.name + "=" + t.value;
    size_t first = one_word ? t.end - 1 : t.end - 2;  // wraps around below 2: refused below
    if (t.end > words.size() || first >= t.end ||
        (!one_word && words[first] != t.name && words[first] != t.name + "="))
      throw std::logic_error(fmt::format("{} {} is not where the parser said it ended ({})", t.name, t.value, t.end));
    for (size_t i = first; i < t.end; ++i) drop[i] = true;
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < words.size(); ++i)
    if (!drop[i]) out.push_back(words[i]);
  return out;
}

}  // namespace ddpctl
