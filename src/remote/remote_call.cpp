#include "remote/remote_call.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "base/diagnostics.hpp"
#include "base/text.hpp"
#include "base/version.hpp"
#include "remote/remote.hpp"

namespace ddpctl {

RemoteTarget remote_target_for(const std::string& host, const std::string& dir_option, const Environment& env) {
  RemoteTarget t;
  t.host = host;
  t.dir_option = dir_option;
  t.home = env.value("HOME");
  t.ssh_command = env.value("DDPCTL_SSH_COMMAND");
  t.version = ddpctl_version();
  t.cwd = std::filesystem::current_path().string();
  return t;
}

RemoteSession::RemoteSession(RemoteTarget target, CommandRunner& local, TerminalRunner& terminal)
    : target_(std::move(target)),
      ssh_(local, ssh_connect(local, target_.host, target_.home, ssh_program(target_.ssh_command)), terminal) {}

int run_remote_call(const RemoteCall& call, RemoteSession& session, bool tty, std::ostream& err) {
  const RemoteTarget& t = session.target();
  SshRunner& ssh = session.ssh();
  RemoteSide side = probe_remote(ssh, t.host, t.version);
  RemoteDdpctl d = choose_remote_ddpctl(side, t.version);
  if (d.use != RemoteDdpctl::Use::Cluster && d.use != RemoteDdpctl::Use::Installed)
    throw UserError(Location{"--on"}, "",
                    fmt::format("{} has {}; until it has this version, run ddpctl on the login host itself", t.host, d.text));
  std::string dir = remote_project_dir(t.cwd, t.home, side.home, t.dir_option);
  int code = ssh.run_attached(remote_ddpctl_argv(t.host, dir, d.path, call.words),
                              tty ? SshInput::Terminal : SshInput::None);
  if (code == 255)
    throw UserError(Location{"--on"}, "",
                    fmt::format("the ssh connection to {} failed while the command ran there (ssh exit 255, its words "
                                "are above): it may or may not have done its work; `ddpctl status --on {}` tells",
                                t.host, t.host));
  std::string brought = code == 0 && call.after ? call.after(session, dir) : "";
  // What the login host said, as this terminal shows it: plain text.
  err << fmt::format("ddpctl: ran on {} in {} with {} through {}{}: {} ssh call(s)\n", t.host, plain_line(dir, 300),
                     plain_line(d.path, 300), session.connection().describe(), brought, ssh.calls());
  return code;
}

}  // namespace ddpctl
