#pragma once
// A login host reached through the user's own OpenSSH (docs/remote.md): their
// ~/.ssh/config, keys, agent, ProxyJump and Kerberos, never a password or MFA
// prompt from inside ddpctl (BatchMode=yes), over one multiplexed connection.
//
// The connection is found once per ddpctl command, in this order:
//   1. a master the user has open (their own ControlPath: `ssh -O check HOST`);
//   2. ddpctl's own master (ControlPath ~/.ssh/ddpctl-%C), opened by an
//      earlier ddpctl command or by the user with the command ddpctl prints;
//   3. a new master of ddpctl's, if ssh can connect without a prompt (keys,
//      an agent, Kerberos): ControlMaster=auto with ControlPersist keeps it
//      for the next commands.
// When none can be made without a prompt, ssh_connect throws a UserError
// with the one `ssh` command that opens ddpctl's master (the user answers
// the MFA there, once).
//
// SshRunner is a CommandRunner (process.hpp) that runs each argv on the
// login host through that connection, so every decision above it (SlurmClient,
// the workflows) is the same as on the login node and testable as it is.
#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "base/process.hpp"

namespace ddpctl {

// How ddpctl's ssh calls reach one host.
struct SshConnection {
  std::string host;  // as the user's ssh config knows it: alice@login.example.org, or an alias
  // The ssh to run: ssh, or $DDPCTL_SSH_COMMAND's words (ssh_program).
  std::vector<std::string> program = {"ssh"};
  enum class Via { UserMaster, DdpctlMaster, NewMaster };
  Via via = Via::NewMaster;
  std::string control_path;  // ddpctl's (Via::DdpctlMaster, NewMaster); empty for the user's own
  // The options every call passes before the host (-o BatchMode=yes, ...).
  std::vector<std::string> options() const;
  // "your open connection", "ddpctl's connection (~/.ssh/ddpctl-...)", ...
  std::string describe() const;
};

// ddpctl's ControlPath: ssh expands %C (a hash of the local host, the remote
// host, port and user), so one path per destination, short enough for a
// Unix socket's 108 bytes. As ssh's config reads it (`-o ControlPath=...`):
// a % of the home doubled, the whole in double quotes where the home has a
// blank, a quote, a backslash or a #. A home holding "${" (which ssh would
// expand as a variable, with no way to write it literally) is not used:
// the socket goes in ddpctl's own folder under /tmp instead
// (control_folder).
std::string ddpctl_control_path(const std::string& home);
// The folder of ddpctl's ControlPath: <home>/.ssh, or /tmp/ddpctl-ssh-<uid>
// where the home holds "${".
std::string control_folder(const std::string& home);

// The ssh to run: $DDPCTL_SSH_COMMAND as git runs GIT_SSH_COMMAND, a
// command line for sh with ssh's arguments after it (`ssh -F
// ~/.ssh/cluster_config`, another ssh). Plain words (no quote, $, ~ or
// other character sh reads) are run without a shell; the rest as `sh -c
// 'LINE "$@"' LINE ARGS...`. Unset or blank: ssh.
std::vector<std::string> ssh_program(const std::string& ddpctl_ssh_command);

// A UserError (--on) unless `host` can be a host to ssh to: not empty or
// blank (an unset $HOST in a script), no option (-oProxyCommand=...), no
// blank or control character.
void check_ssh_host(const std::string& host);
// The same check's problem ("'-x' is not a host to ssh to"), or nullopt.
std::optional<std::string> ssh_host_problem(const std::string& host, const std::string& what = "--on");

// The command that opens ddpctl's master for `host`, answering prompts once.
std::string ssh_open_command(const std::vector<std::string>& program, const std::string& host,
                             const std::string& control_path);

// Finds (or opens) the connection to `host` as above; a UserError when none
// can be made without a prompt. `home`: the user's home, where ddpctl's
// ControlPath lives (~/.ssh/ddpctl-%C).
SshConnection ssh_connect(CommandRunner& local, const std::string& host, const std::string& home,
                          const std::vector<std::string>& program = {"ssh"},
                          std::chrono::milliseconds timeout = std::chrono::seconds(20));

// argv as one command line for the remote shell: each word single-quoted.
std::string remote_command_line(const std::vector<std::string>& argv);

// What the remote command's stdin is: nothing (-n), this terminal (-tt:
// Ctrl-C and a closed terminal reach the remote command), or ssh's own stdin
// as it is (a file ddpctl sends: the snapshot, the portable build).
enum class SshInput { None, Terminal, Stdin };
// The local argv that runs `remote_argv` on the connection's host: `ssh
// OPTIONS [-tt | -n] HOST -- LINE`.
std::vector<std::string> ssh_command(const SshConnection& c, const std::vector<std::string>& remote_argv, SshInput input);
std::vector<std::string> ssh_command(const SshConnection& c, const std::vector<std::string>& remote_argv, bool tty);
// A local argv that runs `argv` with its stdin read from `file` (POSIX sh:
// `sh -c 'exec "$@" <"$0"' FILE ARGV...`), as CommandRunner gives none.
std::vector<std::string> with_stdin_from(const std::string& file, const std::vector<std::string>& argv);

// Runs a local command attached to ddpctl's own stdin, stdout and stderr,
// not captured: --on's command there, through ssh (SshRunner::run_attached),
// whose output is the user's. A CommandRunner captures; this is the seam for
// the other kind, so that a test stands in for the terminal
// (tests/unit/remote/test_remote_call.cpp).
class TerminalRunner {
 public:
  virtual ~TerminalRunner() = default;
  // Its exit status, or 128 + the signal that ended it.
  virtual int run_attached(const std::vector<std::string>& argv) = 0;
};
// This terminal's: foreground.hpp's run_in_foreground.
TerminalRunner& this_terminal();

// Runs every argv on the login host: `ssh OPTIONS HOST -- LINE`. A failure of
// ssh itself (exit 255 with ssh's own message) is reported as the
// connection's, naming the host, not as the remote command's.
class SshRunner : public CommandRunner {
 public:
  SshRunner(CommandRunner& local, SshConnection connection, TerminalRunner& terminal = this_terminal());
  CommandResult run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) override;
  // As run, with `input_file` as the remote command's stdin (sent over the
  // same connection).
  CommandResult run_with_input(const std::vector<std::string>& argv, const std::string& input_file,
                               std::chrono::milliseconds timeout);
  // As run, with the remote command's stdout written to `output_file` here
  // within `bound` (the result's `out` is empty): what fetch brings, a
  // checkpoint relayed.
  CommandResult run_to_file(const std::vector<std::string>& argv, const std::string& output_file,
                            std::chrono::milliseconds timeout, const StdoutBound& bound = {});
  // Runs argv on the login host attached to this terminal, through the
  // TerminalRunner given: its output is the user's. `input` is its stdin
  // (Stdin: `input_file`'s bytes). Returns ssh's exit status: the remote
  // command's, or 255 when ssh itself failed.
  int run_attached(const std::vector<std::string>& argv, SshInput input, const std::string& input_file = "");
  const SshConnection& connection() const { return connection_; }
  int calls() const { return calls_; }  // ssh calls made (docs/remote.md counts them per command)

 private:
  CommandResult run_ssh(const std::vector<std::string>& local_argv, const std::vector<std::string>& argv,
                        std::chrono::milliseconds timeout);
  // ssh's own failure told apart from the command's (connection_failed).
  CommandResult settle_ssh(CommandResult r, const std::vector<std::string>& argv) const;
  CommandRunner& local_;
  TerminalRunner& terminal_;
  SshConnection connection_;
  std::atomic<int> calls_{0};  // calls may come from several threads (a race's relay beside its polls)
};

}  // namespace ddpctl
