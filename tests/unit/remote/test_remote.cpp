// The cluster side of a remote ddpctl: the probe's one command and its
// answer, and which ddpctl the jobs would run there.
#include "catch.hpp"

#include "fake_runner.hpp"
#include "helpers.hpp"
#include "remote/remote.hpp"
#include "base/ssh.hpp"

using namespace ddpctl;
using test::FakeRunner;

namespace {
const std::string kVersion = "0.1.0 (git 1a2b3c4d5e6f)";
}

TEST_CASE("remote: the install folder is named after the version and commit") {
  CHECK(install_folder_name(kVersion) == "0.1.0-1a2b3c4d5e6f");
  CHECK(install_folder_name("0.1.0 (git 1a2b3c4d5e6f-dirty)") == "0.1.0-1a2b3c4d5e6f-dirty");
  CHECK(install_folder_name("0.2.0 (git unknown)") == "0.2.0-unknown");
}

TEST_CASE("remote: one sh line asks the login host for its home, system and ddpctl") {
  std::vector<std::string> argv = remote_probe_argv(kVersion);
  REQUIRE(argv.size() == 3);
  CHECK(argv[0] == "sh");
  CHECK(argv[1] == "-c");
  CHECK(argv[2].find('\n') == std::string::npos);  // one line, whatever the login shell
  CHECK(argv[2].find("$HOME/.local/share/ddpctl/0.1.0-1a2b3c4d5e6f/bin/ddpctl") != std::string::npos);
  // The line works in sh: run it here, with a ddpctl of another version on the PATH.
  test::TempDir dir;
  test::run_bash("mkdir -p \"$1/bin\" && printf '#!/bin/sh\\necho \"ddpctl 0.0.9 (git 000000000000)\"\\n' >\"$1/bin/ddpctl\" && "
                 "chmod +x \"$1/bin/ddpctl\"",
                 {dir.path});
  std::string out = test::run_bash("HOME=\"$1\" PATH=\"$1/bin:/usr/bin:/bin\" sh -c \"$2\"", {dir.path, argv[2]});
  RemoteSide s = parse_remote_probe(out);
  CHECK(s.home == dir.path);
  CHECK(s.system.find(' ') != std::string::npos);
  CHECK(s.ddpctl == dir.path + "/bin/ddpctl");
  CHECK(s.ddpctl_version == "ddpctl 0.0.9 (git 000000000000)");
  CHECK(s.installed.empty());
}

TEST_CASE("remote: the cluster's ddpctl when it is this version, else the one installed, else install, or say why not") {
  RemoteSide s;
  s.home = "/home/alice";
  s.system = "Linux x86_64";
  s.ddpctl = "/usr/bin/ddpctl";
  s.ddpctl_version = "ddpctl " + kVersion;
  RemoteDdpctl d = choose_remote_ddpctl(s, kVersion);
  CHECK(d.use == RemoteDdpctl::Use::Cluster);
  CHECK(d.path == "/usr/bin/ddpctl");
  CHECK(d.text == "the cluster's /usr/bin/ddpctl, the same version (0.1.0 (git 1a2b3c4d5e6f))");

  s.ddpctl_version = "ddpctl 0.0.9 (git 000000000000)";
  d = choose_remote_ddpctl(s, kVersion);
  CHECK(d.use == RemoteDdpctl::Use::Install);
  CHECK(d.path == "/home/alice/.local/share/ddpctl/0.1.0-1a2b3c4d5e6f/bin/ddpctl");
  CHECK(d.text == "none of this version (/usr/bin/ddpctl is 0.0.9 (git 000000000000)): jobs submitted from here need this "
                  "version's portable build at /home/alice/.local/share/ddpctl/0.1.0-1a2b3c4d5e6f/bin/ddpctl");

  s.installed = "/home/alice/.local/share/ddpctl/0.1.0-1a2b3c4d5e6f/bin/ddpctl";
  s.installed_version = "ddpctl " + kVersion;
  d = choose_remote_ddpctl(s, kVersion);
  CHECK(d.use == RemoteDdpctl::Use::Installed);
  CHECK(d.path == s.installed);
  // An install of a broken or other build is not trusted.
  s.installed_version = "";
  CHECK(choose_remote_ddpctl(s, kVersion).use == RemoteDdpctl::Use::Install);

  s.ddpctl.clear();
  s.ddpctl_version.clear();
  s.system = "Linux aarch64";
  d = choose_remote_ddpctl(s, kVersion);
  CHECK(d.use == RemoteDdpctl::Use::Cannot);
  CHECK(d.text == "none of this version (no ddpctl on the PATH), and the portable build is for Linux x86_64, not Linux "
                  "aarch64: install ddpctl 0.1.0 (git 1a2b3c4d5e6f) on the cluster");
}

TEST_CASE("remote: what the login host says reaches this terminal without its escape sequences") {
  // A version line or path there that sets this terminal's title, or clears it.
  RemoteSide s;
  s.home = "/home/\x1b[2Jalice";
  s.system = "Linux\x1b]0;owned\x07";
  s.ddpctl = "/usr/bin/\x1b[31mddpctl";
  s.ddpctl_version = "ddpctl 0.0.9\x1b]0;owned\x07";
  for (const char* system : {"Linux x86_64", "Linux\x1b]0;owned\x07"}) {
    s.system = system;
    RemoteDdpctl d = choose_remote_ddpctl(s, kVersion);
    INFO(d.text);
    CHECK(d.text.find('\x1b') == std::string::npos);
    CHECK(d.text.find('\x07') == std::string::npos);
    CHECK(d.text.find("/usr/bin/?[31mddpctl is 0.0.9?]0;owned?") != std::string::npos);
  }
  s.ddpctl_version = "ddpctl " + kVersion;
  RemoteDdpctl d = choose_remote_ddpctl(s, kVersion);
  CHECK(d.path == "/usr/bin/\x1b[31mddpctl");  // the path itself is the bytes there
  CHECK(d.text.find('\x1b') == std::string::npos);
}

TEST_CASE("remote: the probe goes through the runner once, a failure names the host") {
  FakeRunner ssh;
  ssh.on("sh", {"-c"}, test::exits(0, "home=/home/alice\nsystem=Linux x86_64\nddpctl=\n"));
  RemoteSide s = probe_remote(ssh, "login", kVersion);
  CHECK(ssh.count("sh") == 1);
  CHECK(s.home == "/home/alice");
  CHECK(s.ddpctl.empty());
  FakeRunner broken;
  broken.on("sh", {"-c"}, test::exits(255, "", "ssh: connect to host login port 22: Connection refused"));
  std::string err = test::user_error_of([&] { probe_remote(broken, "login", kVersion); });
  CHECK(err.find("cannot ask login which ddpctl it has") != std::string::npos);
  CHECK(err.find("Connection refused") != std::string::npos);
  CHECK(test::user_error_of([] { parse_remote_probe("Welcome to Gilbreth!\n"); }).find("no home= line") != std::string::npos);
}

TEST_CASE("remote: the folder there is --remote-dir, else this folder's path under the remote home") {
  CHECK(remote_project_dir("/home/alice/proj/a", "/home/alice", "/u/alice", "") == "/u/alice/proj/a");
  CHECK(remote_project_dir("/home/alice/proj/a", "/home/alice/", "/u/alice", "") == "/u/alice/proj/a");
  CHECK(remote_project_dir("/home/alice", "/home/alice", "/u/alice", "") == "/u/alice");
  CHECK(remote_project_dir("/home/alice2/x", "/home/alice", "/u/alice", "/scratch/a") == "/scratch/a");
  CHECK(remote_project_dir("/x", "/home/alice", "/u/alice", "~/proj") == "/u/alice/proj");
  CHECK(remote_project_dir("/x", "/home/alice", "/u/alice", "proj/b") == "/u/alice/proj/b");
  CHECK(remote_project_dir("/x", "/home/alice", "/u/alice", "~") == "/u/alice");
  // Not under the home here (nor a prefix-alike of it): the user says which.
  std::string err = test::user_error_of([] { remote_project_dir("/home/alice2/x", "/home/alice", "/u/alice", ""); });
  CHECK(err.find("--remote-dir: /home/alice2/x is not under your home here (/home/alice)") != std::string::npos);
}

TEST_CASE("remote: the user's words go there less exactly the --on and --remote-dir the parser took") {
  using W = std::vector<std::string>;
  CHECK(without_taken_options({"status", "--on", "login", "exp", "--remote-dir", "/s/a", "--json"},
                              {{"--on", "login", 3}, {"--remote-dir", "/s/a", 6}}) == W{"status", "exp", "--json"});
  CHECK(without_taken_options({"logs", "--on=login", "--remote-dir=/s", "12", "-f"},
                              {{"--on", "login", 2}, {"--remote-dir", "/s", 3}}) == W{"logs", "12", "-f"});
  // `--cell --on`: the parser gave --cell the word --on; the option --on is the next two.
  CHECK(without_taken_options({"logs", "sw", "--cell", "--on", "--on", "h"}, {{"--on", "h", 6}}) ==
        W{"logs", "sw", "--cell", "--on"});
  // The value `--on=x` of a two-word --on; an empty `--on=` takes the next word.
  CHECK(without_taken_options({"cancel", "--on", "--on=x", "1"}, {{"--on", "--on=x", 3}}) == W{"cancel", "1"});
  CHECK(without_taken_options({"cancel", "--on=", "h", "1"}, {{"--on", "h", 3}}) == W{"cancel", "1"});
  // After `--` the parser takes no option: the words stay.
  CHECK(without_taken_options({"cancel", "--on", "login", "--", "--on"}, {{"--on", "login", 3}}) ==
        W{"cancel", "--", "--on"});
  // Where the parser's count does not fit the words, that is ddpctl's bug.
  CHECK_THROWS_AS(without_taken_options({"cancel", "1", "--on", "h"}, {{"--on", "h", 3}}), std::logic_error);
}

TEST_CASE("remote: the command runs in its folder there, or says the folder is not there") {
  test::TempDir dir;
  auto run = [&](const std::string& folder) {
    std::vector<std::string> argv = remote_ddpctl_argv("login", folder, "echo", {"status", "it's"});
    REQUIRE(argv.size() == 8);
    // As the remote shell gets it: each word single-quoted (remote_command_line).
    return test::run_bash("cd / && eval \"$1\" 2>&1; echo \"exit $?\"", {remote_command_line(argv)});
  };
  CHECK(run(dir.path) == "status it's\nexit 0\n");
  CHECK(run(dir.path + "/nope") == "ddpctl: error: --on login: there is no folder " + dir.path +
                                       "/nope there; --remote-dir names the folder to run in (the one whose runs/ holds "
                                       "the runs)\nexit 1\n");
  // It runs in that folder.
  std::vector<std::string> argv = remote_ddpctl_argv("login", dir.path, "pwd", {});
  CHECK(test::run_bash("cd / && eval \"$1\"", {remote_command_line(argv)}) == dir.path + "\n");
}
