#include "base/ssh.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/diagnostics.hpp"
#include "base/foreground.hpp"
#include "base/shell.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace {

// ssh's own failures (exit 255) begin so, or are one of these; a remote
// command that exits 255 prints its own words.
bool ssh_failed(const CommandResult& r) {
  if (r.exit_code != 255) return false;
  for (const char* said : {"ssh:", "Permission denied", "Host key verification failed", "Connection closed",
                           "closed by remote host", "Connection reset", "Broken pipe", "kex_exchange_identification", "mux_client", "Control socket",
                           "Could not resolve hostname", "Connection timed out", "banner exchange"})
    if (r.err.find(said) != std::string::npos) return true;
  return false;
}

std::string last_line(const std::string& text) {
  std::string t = trim(text);
  size_t nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

}  // namespace

std::vector<std::string> SshConnection::options() const {
  std::vector<std::string> o = {"-o", "BatchMode=yes"};
  if (via != Via::UserMaster)
    o.insert(o.end(), {"-o", "ControlMaster=auto", "-o", "ControlPath=" + control_path, "-o", "ControlPersist=10m"});
  return o;
}

std::string SshConnection::describe() const {
  switch (via) {
    case Via::UserMaster:
      return fmt::format("your open ssh connection to {}", host);
    case Via::DdpctlMaster:
      return fmt::format("ddpctl's open ssh connection to {} ({})", host, control_path);
    case Via::NewMaster:
      break;
  }
  return fmt::format("a new ssh connection to {}, kept open 10 minutes ({})", host, control_path);
}

std::string control_folder(const std::string& home) {
  if (home.find("${") != std::string::npos) return fmt::format("/tmp/ddpctl-ssh-{}", ::getuid());
  return home + "/.ssh";
}

namespace {

// The /tmp folder of control_folder: this user's alone (made 0700, or one
// found so), or a UserError: a socket another user could reach is no
// connection to trust.
void make_private_folder(const std::string& folder) {
  if (::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST)
    throw UserError(Location{folder}, "", fmt::format("cannot be made for ssh's connection: {}", std::strerror(errno)));
  struct stat st {};
  if (::lstat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid() || (st.st_mode & 077) != 0)
    throw UserError(Location{folder}, "",
                    "is not a folder of this user's alone, so ddpctl keeps no ssh connection in it (your home holds "
                    "\"${\", which ssh would read as a variable in a ControlPath under it)");
}

}  // namespace

std::string ddpctl_control_path(const std::string& home) {
  // ssh reads -o's value as a line of its config: % starts a token (%% is
  // one %), and a blank ends the word unless the word is in double quotes
  // (where \" and \\ are one character each). %C is ssh's own; "${" would
  // start a variable, so a home with it is not in the path (control_folder).
  std::string path;
  for (char ch : control_folder(home)) path += ch == '%' ? std::string("%%") : std::string(1, ch);
  path += "/ddpctl-%C";
  if (path.find_first_of(" \t\"'\\#") == std::string::npos) return path;
  std::string quoted = "\"";
  for (char ch : path) {
    if (ch == '"' || ch == '\\') quoted += '\\';
    quoted += ch;
  }
  return quoted + "\"";
}

namespace {
// A command line sh would read differently from its blank-separated words.
bool needs_shell(const std::string& line) { return line.find_first_of("|&;<>()$`\\\"'*?[#~=%\n") != std::string::npos; }
// ssh_program's form for such a line: sh -c 'LINE "$@"' LINE ARGS...
bool through_shell(const std::vector<std::string>& program) {
  return program.size() == 4 && program[0] == "sh" && program[1] == "-c";
}
}  // namespace

std::vector<std::string> ssh_program(const std::string& ddpctl_ssh_command) {
  const std::string& line = ddpctl_ssh_command;
  if (trim(line).empty()) return {"ssh"};
  // As git runs GIT_SSH_COMMAND: through sh, the ssh arguments after it.
  if (needs_shell(line)) return {"sh", "-c", line + " \"$@\"", line};
  std::vector<std::string> words;
  std::string word;
  for (char ch : line + " ") {
    if (ch == ' ' || ch == '\t') {
      if (!word.empty()) words.push_back(word);
      word.clear();
    } else {
      word += ch;
    }
  }
  return words;
}

std::string ssh_open_command(const std::vector<std::string>& program, const std::string& host,
                             const std::string& control_path) {
  std::vector<std::string> words = through_shell(program) ? std::vector<std::string>{} : program;
  words.insert(words.end(), {"-o", "ControlMaster=yes", "-o", "ControlPath=" + control_path, "-o",
                             "ControlPersist=yes", "-fN", host});
  // The user's own command line as they wrote it, for their shell.
  return through_shell(program) ? program[3] + " " + shell_join(words) : shell_join(words);
}

std::optional<std::string> ssh_host_problem(const std::string& host, const std::string& what) {
  bool blank = host.find_first_not_of(" \t") == std::string::npos;
  bool odd = std::any_of(host.begin(), host.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f || c == ' '; });
  if (!blank && host[0] != '-' && !odd) return std::nullopt;
  return fmt::format("{} is not a host to ssh to{}", printable(host),
                     blank ? fmt::format(" (an empty {} is no host: name the login host, user@host or a Host of "
                                         "your ~/.ssh/config)",
                                         what)
                           : "");
}

void check_ssh_host(const std::string& host) {
  if (auto problem = ssh_host_problem(host)) throw UserError(Location{"--on"}, "", *problem);
}

SshConnection ssh_connect(CommandRunner& local, const std::string& host, const std::string& home,
                          const std::vector<std::string>& program, std::chrono::milliseconds timeout) {
  check_ssh_host(host);
  SshConnection c;
  c.host = host;
  c.program = program;
  auto ssh = [&](std::vector<std::string> args) {
    args.insert(args.begin(), program.begin(), program.end());
    return local.run(args, timeout);
  };
  // 1. The user's own master, where their config names a ControlPath.
  CommandResult mine = ssh({"-o", "BatchMode=yes", "-O", "check", host});
  if (mine.not_found)
    throw UserError(Location{"--on"}, "", fmt::format("no {} on PATH: ddpctl reaches the login host through "
                                                      "OpenSSH's ssh",
                                                      program.front()));
  if (through_shell(program) && mine.exit_code == 127)
    throw UserError(Location{"--on"}, "",
                    fmt::format("DDPCTL_SSH_COMMAND ({}) does not run: {}", printable(program[3], 200),
                                plain_line(last_line(mine.err))));
  if (mine.ok()) {
    c.via = SshConnection::Via::UserMaster;
    return c;
  }
  // 2. ddpctl's own, opened earlier.
  c.control_path = ddpctl_control_path(home);
  if (control_folder(home) != home + "/.ssh") make_private_folder(control_folder(home));
  if (ssh({"-o", "BatchMode=yes", "-o", "ControlPath=" + c.control_path, "-O", "check", host}).ok()) {
    c.via = SshConnection::Via::DdpctlMaster;
    return c;
  }
  // 3. A new one, if ssh needs no prompt; ControlPersist keeps it.
  c.via = SshConnection::Via::NewMaster;
  std::vector<std::string> argv;
  for (auto& o : c.options()) argv.push_back(o);
  argv.insert(argv.end(), {"-o", "ConnectTimeout=15", host, "--", "true"});
  CommandResult r = ssh(argv);
  if (r.ok()) return c;
  std::string why = r.timed_out ? fmt::format("no answer within {} s", timeout.count() / 1000)
                    : r.err.empty() ? r.describe()
                                    : plain_line(last_line(r.err));
  throw UserError(Location{"--on"}, "",
                  fmt::format("cannot reach {} through ssh without a prompt ({}). ddpctl never asks for passwords "
                              "or codes itself: open its connection once in a terminal (ssh asks what it needs "
                              "there), then run ddpctl again:\n  {}",
                              host, why, ssh_open_command(program, host, c.control_path)));
}

std::string remote_command_line(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& w : argv) {
    if (!line.empty()) line += ' ';
    // Always quoted: the remote shell may be csh or zsh, whose words differ.
    std::string q = "'";
    for (char ch : w) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    line += q + "'";
  }
  return line;
}

TerminalRunner& this_terminal() {
  struct Foreground : TerminalRunner {
    int run_attached(const std::vector<std::string>& argv) override { return run_in_foreground(argv); }
  };
  static Foreground terminal;
  return terminal;
}

SshRunner::SshRunner(CommandRunner& local, SshConnection connection, TerminalRunner& terminal)
    : local_(local), terminal_(terminal), connection_(std::move(connection)) {}

std::vector<std::string> ssh_command(const SshConnection& c, const std::vector<std::string>& remote_argv,
                                     SshInput input) {
  std::vector<std::string> ssh = c.program;
  for (auto& o : c.options()) ssh.push_back(o);
  if (input == SshInput::Terminal) ssh.push_back("-tt");
  if (input == SshInput::None) ssh.push_back("-n");
  ssh.insert(ssh.end(), {c.host, "--", remote_command_line(remote_argv)});
  return ssh;
}

std::vector<std::string> ssh_command(const SshConnection& c, const std::vector<std::string>& remote_argv, bool tty) {
  return ssh_command(c, remote_argv, tty ? SshInput::Terminal : SshInput::None);
}

std::vector<std::string> with_stdin_from(const std::string& file, const std::vector<std::string>& argv) {
  std::vector<std::string> out = {"sh", "-c", "exec \"$@\" <\"$0\"", file};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}


CommandResult SshRunner::run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  return run_with_input(argv, "", timeout);
}

CommandResult SshRunner::run_with_input(const std::vector<std::string>& argv, const std::string& input_file,
                                        std::chrono::milliseconds timeout) {
  return run_ssh(input_file.empty() ? ssh_command(connection_, argv, SshInput::None)
                                    : with_stdin_from(input_file, ssh_command(connection_, argv, SshInput::Stdin)),
                 argv, timeout);
}

CommandResult SshRunner::run_to_file(const std::vector<std::string>& argv, const std::string& output_file,
                                     std::chrono::milliseconds timeout, const StdoutBound& bound) {
  calls_++;
  CommandResult r = local_.run_to_file(ssh_command(connection_, argv, SshInput::None), output_file, timeout, bound);
  return settle_ssh(r, argv);
}

int SshRunner::run_attached(const std::vector<std::string>& argv, SshInput input, const std::string& input_file) {
  calls_++;
  std::vector<std::string> ssh = ssh_command(connection_, argv, input);
  return terminal_.run_attached(input == SshInput::Stdin ? with_stdin_from(input_file, ssh) : ssh);
}

CommandResult SshRunner::run_ssh(const std::vector<std::string>& ssh, const std::vector<std::string>& argv,
                                 std::chrono::milliseconds timeout) {
  calls_++;
  return settle_ssh(local_.run(ssh, timeout), argv);
}

CommandResult SshRunner::settle_ssh(CommandResult r, const std::vector<std::string>& argv) const {
  r.argv = argv;  // what ran, as the callers name it ("squeue exited with ...")
  if (ssh_failed(r)) {
    r.err = fmt::format("ssh to {} failed: {}", connection_.host, plain_line(last_line(r.err)));
    r.connection_failed = true;
  }
  return r;
}

}  // namespace ddpctl
