// The coordinator's way to its sites over ssh (site_caller.cpp), through a
// fake ssh and the real process runner: a relayed checkpoint is bounded by
// the size its site declares, and an endless one is stopped.
#include "catch.hpp"

#include <filesystem>

#include "base/files.hpp"
#include "base/process.hpp"
#include "base/version.hpp"
#include "helpers.hpp"
#include "sites/site_caller.hpp"

using namespace ddpctl;
namespace fs = std::filesystem;

namespace {

// Two login hosts behind a fake ssh (the real process runner): the line
// after `--` runs here, with a fake ddpctl first on PATH that says this
// version, and answers race-checkpoint as `script` (sh) does.
struct RelayHosts {
  test::TempDir dir;
  std::string ssh = dir.path + "/ssh";
  RelayHosts(const std::string& send_script) {
    test::write(ssh, "#!/bin/sh\ncase \" $* \" in *\" -O \"*) exit 0 ;; esac\n"
                     "while [ \"$1\" != -- ]; do shift; done\nPATH=" + dir.path + "/bin:$PATH exec sh -c \"$2\"\n");
    test::write(dir.path + "/bin/ddpctl",
                "#!/bin/sh\n[ \"$1\" = --version ] && { echo 'ddpctl " + ddpctl_version() + "'; exit 0; }\n"
                "case \" $* \" in *\" --send \"*) " + send_script + " ;;\n"
                "  *\" --receive \"*) cat >\"" + dir.path + "/received\"; echo '{\"files\":1}' ;; esac\n");
    fs::permissions(ssh, fs::perms::owner_all);
    fs::permissions(dir.path + "/bin/ddpctl", fs::perms::owner_all);
  }
  bool relay(std::string& answer, std::string& error) {
    RemoteTarget t;
    t.home = dir.path;
    t.ssh_command = ssh;
    t.version = ddpctl_version();
    t.cwd = dir.path;
    SystemCommandRunner local;
    SshSiteCaller caller(t, local);
    SiteOfRace a{"a", "a.org", dir.path, {"1x4"}}, b{"b", "b.org", dir.path, {"2x4"}};
    return caller.relay(a, {"race-checkpoint", "race-1", "--send"}, b, {"race-checkpoint", "race-1", "--receive"},
                        dir.path + "/relay.tar", answer, error);
  }
};

}  // namespace

TEST_CASE("a relayed checkpoint is bounded by the size its site declares: an endless one is stopped") {
  SECTION("an honest site: the stream goes whole to the grantee's site") {
    RelayHosts hosts("echo 'ddpctl-checkpoint 20'; printf 'ten bytes!ten bytes!'");
    std::string answer, error;
    REQUIRE(hosts.relay(answer, error));
    CHECK(read_file(hosts.dir.path + "/received") == "ddpctl-checkpoint 20\nten bytes!ten bytes!");
  }
  SECTION("a site that declares 1000 bytes and sends without end") {
    RelayHosts hosts("echo 'ddpctl-checkpoint 1000'; exec cat /dev/zero");
    std::string answer, error;
    CHECK_FALSE(hosts.relay(answer, error));
    CHECK_THAT(error, Catch::Matchers::Contains("site a: its checkpoint was refused: it sent more than the 1000 B it "
                                                "declared"));
    CHECK_FALSE(fs::exists(hosts.dir.path + "/received"));
  }
  SECTION("a site that sends without saying its size") {
    RelayHosts hosts("exec cat /dev/zero");
    std::string answer, error;
    CHECK_FALSE(hosts.relay(answer, error));
    CHECK_THAT(error, Catch::Matchers::Contains("does not begin with its size (\"ddpctl-checkpoint BYTES\")"));
  }
}
