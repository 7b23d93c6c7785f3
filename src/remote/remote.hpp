#pragma once
// The cluster side of ddpctl run from the user's machine (docs/remote.md):
// which ddpctl the jobs would run on the login host. The job's side of
// ddpctl (the agent on the nodes, `race-again`, `sweep continue`) must be
// the same version as the ddpctl that renders the scripts: the cluster's own
// when it is that version, else this version's portable build installed
// under the user's home there (~/.local/share/ddpctl/<version>/).
#include <string>
#include <vector>

#include "base/process.hpp"

namespace ddpctl {

// What the login host says, in one ssh call (probe_remote).
struct RemoteSide {
  std::string home;               // $HOME there
  std::string system;             // `uname -sm`: "Linux x86_64"
  std::string ddpctl;             // `command -v ddpctl` ("" : none on the PATH)
  std::string ddpctl_version;     // its --version line
  std::string installed;          // this version's install under home, when there
  std::string installed_version;  // its --version line
  // With a folder to ask about (remote_probe_argv's dir_word):
  std::string dir;                // that folder, ~ expanded
  bool snapshot_present = false;  // its runs store has the snapshot asked about
};

// sh code that sets $d to the folder word in $1 ("/abs", "~/rel" or "~"),
// ~ expanded to $HOME there.
extern const char* const kRemoteDirSh;

// "0.1.0-1a2b3c4d5e6f" of "0.1.0 (git 1a2b3c4d5e6f)": the install folder's
// name (a dirty build's too: "0.1.0-1a2b3c4d5e6f-dirty").
std::string install_folder_name(const std::string& version);
// The one remote command: a POSIX sh line (the login shell may be csh).
// With `dir_word` (remote_dir_word) it also says that folder, and whether
// <dir>/<runs>/.snapshots/<snapshot_id> is there (a code state sent before).
std::vector<std::string> remote_probe_argv(const std::string& version, const std::string& dir_word = "",
                                           const std::string& runs = "", const std::string& snapshot_id = "");
// Its key=value lines; a line it does not know is skipped. Throws UserError
// when there is no home line (not the probe's answer).
RemoteSide parse_remote_probe(const std::string& out);
// Runs the probe through `ssh` (an SshRunner), with remote_probe_argv's
// folder and snapshot when given; throws UserError naming `host` and what
// ssh said when it fails.
RemoteSide probe_remote(CommandRunner& ssh, const std::string& host, const std::string& version,
                        const std::string& dir_word = "", const std::string& runs = "",
                        const std::string& snapshot_id = "");

// Which ddpctl the cluster side would run, and the line that says so.
struct RemoteDdpctl {
  enum class Use { Cluster, Installed, Install, Cannot };
  Use use = Use::Install;
  std::string path;  // the binary (Install: where it will go)
  std::string text;  // "the cluster's /usr/bin/ddpctl, the same version (0.1.0 (git ...))"
};
// `version`: this build's ("0.1.0 (git 1a2b3c4d5e6f)"); a --version line
// names the same build when it is "ddpctl " + version.
RemoteDdpctl choose_remote_ddpctl(const RemoteSide& side, const std::string& version);

// Where on the login host a command runs (its ./runs is the runs folder, as
// on the login node): `option` (--remote-dir; relative: under the remote
// home) when given, else the same path under the remote home as `cwd` has
// under the local one. A UserError when neither says.
std::string remote_project_dir(const std::string& cwd, const std::string& local_home, const std::string& remote_home,
                               const std::string& option);
// The same folder as a word for the login host's sh, before its home is
// known: "/abs", "~/rel" or "~" (kRemoteDirSh expands it there).
std::string remote_dir_word(const std::string& cwd, const std::string& local_home, const std::string& option);
// The login host's argv that runs `ddpctl WORDS` in `dir` (one sh line; a
// folder that is not there is an error naming it and --remote-dir).
std::vector<std::string> remote_ddpctl_argv(const std::string& host, const std::string& dir, const std::string& ddpctl,
                                            const std::vector<std::string>& words);
// One option as the command-line parser took it: its name, its value, and
// where its last word ends among the words after `ddpctl` (the parser says,
// as it takes them: src/cli/common.cpp).
struct TakenOption {
  std::string name, value;
  size_t end = 0;
};
// The words the user typed after `ddpctl`, less exactly the words of the
// options `taken` (--on and --remote-dir): `--on=HOST` is one word, `--on
// HOST` two. The rest go as typed, so the cluster's ddpctl parses them as
// this one did (`logs sw --cell --on --on h`: `logs sw --cell --on`).
std::vector<std::string> without_taken_options(const std::vector<std::string>& words,
                                               const std::vector<TakenOption>& taken);

}  // namespace ddpctl
