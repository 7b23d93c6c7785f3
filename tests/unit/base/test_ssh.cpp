// The login host through the user's own ssh (ssh.hpp): which connection is
// used, that ddpctl never prompts, and how a remote command's argv travels.
// The real OpenSSH against the local cluster's sshd: tests/slurm/test_remote_*.
#include "catch.hpp"

#include <unistd.h>

#include "fake_runner.hpp"
#include "helpers.hpp"
#include "base/ssh.hpp"

using namespace ddpctl;
using test::exits;
using test::FakeRunner;

namespace {

const std::string kHome = "/home/alice";
const std::string kPath = "/home/alice/.ssh/ddpctl-%C";

// ssh -O check: "Master running" (stderr, exit 0), or no master.
CommandResult master_running() { return exits(0, "", "Master running (pid=4242)\n"); }
CommandResult no_master() {
  return exits(255, "", "Control socket connect(/home/alice/.ssh/cm-login): No such file or directory\n");
}

}  // namespace

TEST_CASE("ssh_connect uses the user's own open connection first") {
  FakeRunner local;
  local.on("ssh", {"-O", "check"}, master_running());
  SshConnection c = ssh_connect(local, "alice@login.example.org", kHome);
  CHECK(c.via == SshConnection::Via::UserMaster);
  CHECK(c.options() == std::vector<std::string>{"-o", "BatchMode=yes"});
  CHECK(local.calls.size() == 1);
  CHECK(local.calls[0] == std::vector<std::string>{"ssh", "-o", "BatchMode=yes", "-O", "check", "alice@login.example.org"});
}

TEST_CASE("ssh_connect uses ddpctl's own connection where the user has none open") {
  FakeRunner local;
  local.on("ssh", {"-O", "check"}, no_master());
  local.on("ssh", {"ControlPath=" + kPath, "-O", "check"}, master_running());
  SshConnection c = ssh_connect(local, "gilbreth", kHome);
  CHECK(c.via == SshConnection::Via::DdpctlMaster);
  CHECK(c.control_path == kPath);
  CHECK(c.options() == std::vector<std::string>{"-o", "BatchMode=yes", "-o", "ControlMaster=auto", "-o",
                                                "ControlPath=" + kPath, "-o", "ControlPersist=10m"});
  CHECK(local.count("ssh", {"true"}) == 0);
}

TEST_CASE("ssh_connect opens a connection that persists where ssh needs no prompt") {
  FakeRunner local;
  local.on("ssh", {"-O", "check"}, no_master());
  local.on("ssh", {"true"}, exits(0));
  SshConnection c = ssh_connect(local, "gilbreth", kHome);
  CHECK(c.via == SshConnection::Via::NewMaster);
  REQUIRE(local.calls.size() == 3);
  const auto& open = local.calls[2];
  CHECK(std::find(open.begin(), open.end(), "BatchMode=yes") != open.end());
  CHECK(std::find(open.begin(), open.end(), "ControlPersist=10m") != open.end());
  CHECK(std::find(open.begin(), open.end(), "ControlMaster=auto") != open.end());
}

TEST_CASE("ssh_connect stops at once with the one command to run where ssh would prompt") {
  FakeRunner local;
  local.on("ssh", {"-O", "check"}, no_master());
  SECTION("keyboard-interactive (MFA) only") {
    local.on("ssh", {"true"}, exits(255, "", "alice@login.example.org: Permission denied (keyboard-interactive).\n"));
    std::string e = test::user_error_of([&] { ssh_connect(local, "alice@login.example.org", kHome); });
    CHECK_THAT(e, Catch::Contains("cannot reach alice@login.example.org through ssh without a prompt "
                                  "(alice@login.example.org: Permission denied (keyboard-interactive).)"));
    CHECK_THAT(e, Catch::Contains("\n  ssh -o ControlMaster=yes -o ControlPath=/home/alice/.ssh/ddpctl-%C -o "
                                  "ControlPersist=yes -fN alice@login.example.org"));
  }
  SECTION("no answer") {
    local.on("ssh", {"true"}, test::times_out());
    CHECK_THAT(test::user_error_of([&] { ssh_connect(local, "gilbreth", kHome); }),
               Catch::Contains("(no answer within 20 s)"));
  }
  SECTION("no ssh at all") {
    FakeRunner bare;
    bare.on("ssh", {}, test::not_found());
    CHECK_THAT(test::user_error_of([&] { ssh_connect(bare, "gilbreth", kHome); }), Catch::Contains("no ssh on PATH"));
  }
  SECTION("an option is no host") {
    CHECK_THAT(test::user_error_of([&] { ssh_connect(local, "-oProxyCommand=x", kHome); }),
               Catch::Contains("is not a host to ssh to"));
    CHECK(local.calls.empty());
  }
}

TEST_CASE("DDPCTL_SSH_COMMAND names the ssh to run, as GIT_SSH_COMMAND does") {
  CHECK(ssh_program("") == std::vector<std::string>{"ssh"});
  CHECK(ssh_program("  ") == std::vector<std::string>{"ssh"});
  CHECK(ssh_program("ssh -F /tmp/x/config") == std::vector<std::string>{"ssh", "-F", "/tmp/x/config"});
  FakeRunner local;
  local.on("ssh", {"-O", "check"}, master_running());
  SshConnection c = ssh_connect(local, "gilbreth", kHome, ssh_program("ssh -F /tmp/x/config"));
  REQUIRE(local.calls.size() == 1);
  CHECK(local.calls[0] == std::vector<std::string>{"ssh", "-F", "/tmp/x/config", "-o", "BatchMode=yes", "-O", "check",
                                                   "gilbreth"});
  SshRunner runner(local, c);
  local.on("ssh", {"gilbreth", "--"}, exits(0, "22.05.8\n"));
  runner.run({"sinfo", "--version"}, std::chrono::seconds(5));
  CHECK(local.calls.back() == std::vector<std::string>{"ssh", "-F", "/tmp/x/config", "-o", "BatchMode=yes", "-n", "gilbreth",
                                                       "--", "'sinfo' '--version'"});
}

TEST_CASE("DDPCTL_SSH_COMMAND with quotes or ~ runs through sh, as GIT_SSH_COMMAND does") {
  // What the command gets: its own words as sh reads them, then ddpctl's.
  SystemCommandRunner here;
  auto words_of = [&](const std::string& line) {
    std::vector<std::string> argv = ssh_program(line);
    argv.insert(argv.end(), {"-o", "BatchMode=yes", "it's"});
    CommandResult r = here.run(argv, std::chrono::seconds(10));
    INFO(r.describe());
    REQUIRE(r.ok());
    return r.out;
  };
  CHECK(words_of(R"(printf '<%s>' -F "/tmp/a b/config")") == "<-F></tmp/a b/config><-o><BatchMode=yes><it's>");
  CHECK(words_of(R"(printf '<%s>' \~ ~/x)") == "<~><" + test::run_bash("printf %s \"$HOME\"") + "/x><-o><BatchMode=yes><it's>");
  CHECK(words_of("echo  plain") == "plain -o BatchMode=yes it's\n");  // plain words: no shell
  // The command that opens ddpctl's connection shows the line as written.
  CHECK(ssh_open_command(ssh_program(R"(ssh -F "/a b/c")"), "h", kPath) ==
        R"(ssh -F "/a b/c" -o ControlMaster=yes -o ControlPath=/home/alice/.ssh/ddpctl-%C -o ControlPersist=yes -fN h)");
}

TEST_CASE("ddpctl's ControlPath reaches ssh as the home's own bytes, with blanks, % and quotes") {
  // OpenSSH itself reads the options (ssh -G prints its configuration and connects nowhere).
  for (std::string home : {"/home/alice", "/home/al ice", "/home/50%d", "/home/a\"b\\c'd #e"}) {
    SshConnection c;
    c.via = SshConnection::Via::NewMaster;
    c.control_path = ddpctl_control_path(home);
    std::vector<std::string> o = c.options();
    auto at = std::find(o.begin(), o.end(), "ControlPath=" + c.control_path);
    REQUIRE(at != o.end());
    // Its controlpath line, or what it said instead.
    std::string seen = test::run_bash(
        "said=$(ssh -F /dev/null -G -o \"$1\" login 2>&1); grep -i '^controlpath ' <<<\"$said\" || echo \"$said\"", {*at});
    INFO("home " << home << ": " << *at);
    CHECK(seen.rfind("controlpath " + home + "/.ssh/ddpctl-", 0) == 0);
  }
  // A home holding "${X}" would be a variable there, with no way to write
  // it literally: the socket goes in this user's own folder under /tmp.
  const std::string odd = "/home/a${HOME}b";
  SshConnection c;
  c.via = SshConnection::Via::NewMaster;
  c.control_path = ddpctl_control_path(odd);
  CHECK(control_folder(odd) == "/tmp/ddpctl-ssh-" + std::to_string(::getuid()));
  std::string seen = test::run_bash("ssh -F /dev/null -G -o \"ControlPath=$1\" login 2>&1 | grep -i '^controlpath '",
                                    {c.control_path});
  CHECK(seen.rfind("controlpath " + control_folder(odd) + "/ddpctl-", 0) == 0);
}

TEST_CASE("an empty or blank --on is no host: nothing runs, here or there") {
  FakeRunner local;
  for (const char* host : {"", " ", "\t", "a b", "login\n", "-oProxyCommand=x"}) {
    CHECK_THAT(test::user_error_of([&] { ssh_connect(local, host, kHome); }), Catch::Contains("is not a host to ssh to"));
    CHECK_THAT(test::user_error_of([&] { check_ssh_host(host); }), Catch::StartsWith("--on: "));
  }
  CHECK(local.calls.empty());
  CHECK_NOTHROW(check_ssh_host("alice@login-1.example.org"));
}

TEST_CASE("remote_command_line quotes every word for any remote shell") {
  CHECK(remote_command_line({"squeue", "--json"}) == "'squeue' '--json'");
  CHECK(remote_command_line({"sbatch", "--comment=ddpctl:abc it's", "/runs/a b/job.sh"}) ==
        "'sbatch' '--comment=ddpctl:abc it'\\''s' '/runs/a b/job.sh'");
  CHECK(remote_command_line({"echo", "$HOME", "`x`", "*"}) == "'echo' '$HOME' '`x`' '*'");
}

TEST_CASE("ssh_command: a terminal for an interactive command (-tt), else no stdin (-n)") {
  SshConnection c;
  c.host = "gilbreth";
  c.via = SshConnection::Via::UserMaster;
  CHECK(ssh_command(c, {"ddpctl", "logs", "-f"}, true) ==
        std::vector<std::string>{"ssh", "-o", "BatchMode=yes", "-tt", "gilbreth", "--", "'ddpctl' 'logs' '-f'"});
  CHECK(ssh_command(c, {"ddpctl", "status"}, false) ==
        std::vector<std::string>{"ssh", "-o", "BatchMode=yes", "-n", "gilbreth", "--", "'ddpctl' 'status'"});
}
