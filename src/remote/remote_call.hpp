#pragma once
// --on HOST's one way to the login host (docs/remote.md): every remote
// command (the generic one below, submit, doctor, fetch) opens a
// RemoteSession, whose SshRunner makes and counts each ssh call through the
// local CommandRunner, and the one attached to this terminal through a
// TerminalRunner (ssh.hpp; tests: tests/unit/remote/test_remote_call.cpp).
// run_remote_call runs `ddpctl WORDS` there attached; what the command then
// does here (report --plot brings its file back, status refreshes fetched
// copies: remote_fetch.hpp) is the caller's AfterRemote, not read back out of
// the words.
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "base/process.hpp"
#include "base/environment.hpp"
#include "base/ssh.hpp"

namespace ddpctl {

// Where --on goes and from where: what every remote command is given.
struct RemoteTarget {
  std::string host;         // --on
  std::string dir_option;   // --remote-dir ("": this folder's path under the home there)
  std::string home;         // the local user's ($HOME): ddpctl's ControlPath lives there
  std::string ssh_command;  // $DDPCTL_SSH_COMMAND
  std::string version;      // this build's (ddpctl_version())
  std::string cwd;          // this folder: the folder there follows it (remote_dir_word)
};

// --on HOST and --remote-dir DIR from this folder: this user's home and ssh
// ($HOME, $DDPCTL_SSH_COMMAND, from `env`), this version, this folder.
RemoteTarget remote_target_for(const std::string& host, const std::string& dir_option, const Environment& env);

// One command's connection to the login host: found (or opened) once by
// ssh_connect through `local`, then every call through `ssh()`, which counts
// them; those attached to this terminal go through `terminal`.
class RemoteSession {
 public:
  RemoteSession(RemoteTarget target, CommandRunner& local, TerminalRunner& terminal = this_terminal());
  const RemoteTarget& target() const { return target_; }
  const SshConnection& connection() const { return ssh_.connection(); }
  SshRunner& ssh() { return ssh_; }

 private:
  RemoteTarget target_;
  SshRunner ssh_;
};

// What a command does here after its ddpctl ran there and exited 0, through
// the same session; `dir` is the folder it ran in there. Returns what the
// closing line adds ("; brought FILE back"), "" for nothing said.
using AfterRemote = std::function<std::string(RemoteSession& session, const std::string& dir)>;

// `ddpctl WORDS` on the login host (status, logs, cancel, report, sweep
// retry): the probe (which ddpctl of this version is there; none: a
// UserError before anything runs), then the command in its folder there
// (remote_ddpctl_argv) attached to this terminal (`tty`: ssh -tt, else -n),
// then `after` when it exited 0. A dropped connection (ssh exit 255) is a
// UserError saying the command may or may not have done its work. Says on
// `err` where it ran and how many ssh calls it took; returns its exit status.
struct RemoteCall {
  std::vector<std::string> words;  // after `ddpctl`, --on and --remote-dir left out (without_taken_options)
  AfterRemote after;               // may be empty
};
int run_remote_call(const RemoteCall& call, RemoteSession& session, bool tty, std::ostream& err);

}  // namespace ddpctl
