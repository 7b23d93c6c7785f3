// Slurm's commands run on the login host through the user's ssh
// (SshRunner, ssh.hpp): the command's own answer as it ran there, and a
// connection dropped while sbatch ran is an unknown outcome to SlurmClient,
// never a rejection. The ssh connection itself: tests/unit/base/test_ssh.cpp.
#include "catch.hpp"

#include "base/ssh.hpp"
#include "fake_runner.hpp"
#include "helpers.hpp"
#include "slurm/slurm.hpp"

using namespace ddpctl;
using test::exits;
using test::FakeRunner;

namespace {

const std::string kPath = "/home/alice/.ssh/ddpctl-%C";

}  // namespace

TEST_CASE("SshRunner runs each command on the login host and tells a dropped connection from the command's failure") {
  FakeRunner local;
  SshConnection c;
  c.host = "gilbreth";
  c.via = SshConnection::Via::DdpctlMaster;
  c.control_path = kPath;
  SshRunner ssh(local, c);
  SECTION("the command's own answer, as it ran there") {
    local.on("ssh", {"gilbreth"}, exits(1, "", "squeue: error: Invalid user\n"));
    CommandResult r = ssh.run({"squeue", "--json"}, std::chrono::seconds(5));
    REQUIRE(local.calls.size() == 1);
    CHECK(local.calls[0] == std::vector<std::string>{"ssh", "-o", "BatchMode=yes", "-o", "ControlMaster=auto", "-o",
                                                     "ControlPath=" + kPath, "-o", "ControlPersist=10m", "-n", "gilbreth",
                                                     "--", "'squeue' '--json'"});
    CHECK(r.argv == std::vector<std::string>{"squeue", "--json"});
    CHECK(r.exit_code == 1);
    CHECK_FALSE(r.connection_failed);
    CHECK(r.describe() == "squeue exited with status 1: squeue: error: Invalid user");
    CHECK(ssh.calls() == 1);
  }
  SECTION("the connection dropped while sbatch ran: its outcome is unknown, never a rejection") {
    local.on("ssh", {"gilbreth"}, exits(255, "", "Connection to 10.0.0.2 closed by remote host.\n"));
    CommandResult r = ssh.run({"sbatch", "--parsable", "job.sh"}, std::chrono::seconds(5));
    CHECK(r.connection_failed);
    CHECK(r.describe() ==
          "sbatch could not be run or did not answer: ssh to gilbreth failed: Connection to 10.0.0.2 closed by remote "
          "host.");
    SlurmClient slurm(ssh);
    CHECK(slurm.submit({"job.sh"}).kind == SbatchResult::Kind::Unconfirmed);
  }
  SECTION("a remote command that itself exits 255 is the command's status") {
    local.on("ssh", {"gilbreth"}, exits(255, "", "myprog: fatal\n"));
    CommandResult r = ssh.run({"myprog"}, std::chrono::seconds(5));
    CHECK_FALSE(r.connection_failed);
    CHECK(r.exit_code == 255);
  }
}
