// SystemCommandRunner: argv in, exit status and output out, within a time limit.
#include "catch.hpp"
#include <csignal>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "helpers.hpp"
#include "base/process.hpp"

using namespace ddpctl;
using namespace std::chrono_literals;

TEST_CASE("runner captures stdout, stderr and the exit code") {
  SystemCommandRunner r;
  CommandResult res = r.run({"sh", "-c", "echo out; echo err >&2; exit 3"}, 10s);
  CHECK(res.exit_code == 3);
  CHECK(res.out == "out\n");
  CHECK(res.err == "err\n");
  CHECK_FALSE(res.ok());
  CHECK(res.describe() == "sh exited with status 3: err");
}

TEST_CASE("describe_whole keeps every line the command said, and both name the program env runs") {
  CommandResult res;
  res.argv = {"env", "GIT_INDEX_FILE=/tmp/i", "git", "add", "--all"};
  res.exit_code = 1;
  res.err = "The following paths are ignored by one of your .gitignore files:\ndemo\n\x1b[31mhint\x1b[0m: Use -f\n\n";
  CHECK(res.describe() == "git exited with status 1: The following paths are ignored by one of your .gitignore files:");
  CHECK(res.describe_whole() ==
        "git exited with status 1: The following paths are ignored by one of your .gitignore files:\n  demo\n"
        "  ?[31mhint?[0m: Use -f");
  res.err = "one line\n";
  CHECK(res.describe_whole() == "git exited with status 1: one line");
  res.err.clear();
  for (int i = 0; i < 50; ++i) res.err += fmt::format("line {}\n", i);
  std::string whole = res.describe_whole();
  CHECK_THAT(whole, Catch::Contains("\n  line 40\n  ... and 9 more lines"));
  CHECK_THAT(whole, !Catch::Contains("line 41"));
}

TEST_CASE("runner passes arguments as they are, with no shell in between") {
  SystemCommandRunner r;
  CommandResult res = r.run({"printf", "%s|", "a b", "$(id)", "'q'", ""}, 10s);
  CHECK(res.ok());
  CHECK(res.out == "a b|$(id)|'q'||");
}

TEST_CASE("runner stops a command that runs past its limit, with its children") {
  SystemCommandRunner r;
  auto start = std::chrono::steady_clock::now();
  CommandResult res = r.run({"sh", "-c", "sleep 30 & sleep 30"}, 300ms);
  CHECK(res.timed_out);
  CHECK(std::chrono::steady_clock::now() - start < 5s);
  CHECK_THAT(res.describe(), Catch::Contains("did not finish in time"));
}

TEST_CASE("runner reports a program that is not on PATH") {
  SystemCommandRunner r;
  CommandResult res = r.run({"ddpctl-no-such-program"}, 10s);
  CHECK(res.not_found);
  CHECK(res.describe() == "'ddpctl-no-such-program' was not found on PATH");
}

TEST_CASE("runner reports a command killed by a signal") {
  SystemCommandRunner r;
  CommandResult res = r.run({"sh", "-c", "kill -9 $$"}, 10s);
  CHECK(res.term_signal == 9);
  CHECK_FALSE(res.ok());
}

TEST_CASE("a command dies with the process that ran it, even killed with SIGKILL") {
  test::TempDir tmp;
  std::string pid_file = tmp.path + "/pid";
  pid_t ddpctl = fork();
  REQUIRE(ddpctl >= 0);
  if (ddpctl == 0) {
    // Stands for ddpctl: it runs a slow command (sbatch) and is killed.
    SystemCommandRunner runner;
    runner.run({"sh", "-c", "echo $$ >" + pid_file + ".tmp; mv " + pid_file + ".tmp " + pid_file + "; exec sleep 60"},
               std::chrono::seconds(120));
    _exit(0);
  }
  std::string child;
  for (int i = 0; i < 3000 && child.empty(); ++i) {  // up to 30 s for sh to start
    std::ifstream in(pid_file);
    if (!(in >> child)) child.clear(), usleep(10000);
  }
  REQUIRE_FALSE(child.empty());
  kill(ddpctl, SIGKILL);
  waitpid(ddpctl, nullptr, 0);
  // PR_SET_PDEATHSIG kills it at once; allow a loaded machine 30 s.
  bool gone = false;
  for (int i = 0; i < 3000 && !gone; ++i) {
    std::ifstream stat("/proc/" + child + "/stat");
    std::string line;
    gone = !std::getline(stat, line) || line.find(") Z ") != std::string::npos;
    if (!gone) usleep(10000);
  }
  CHECK(gone);
  if (!gone) kill(std::stoi(child), SIGKILL);
}

TEST_CASE("runner never cuts a command's output silently: past 64 MiB the command is stopped and it says so") {
  SystemCommandRunner r;
  CommandResult res = r.run({"head", "-c", "67108865", "/dev/zero"}, 60s);
  CHECK_FALSE(res.ok());
  CHECK_THAT(res.describe(), Catch::Contains("head printed more than 64 MiB on stdout"));
  res = r.run({"sh", "-c", "head -c 67108865 /dev/zero >&2"}, 60s);
  CHECK_FALSE(res.ok());
  CHECK_THAT(res.describe(), Catch::Contains("sh printed more than 64 MiB on stderr"));
  // One that would flood for ever ends there too, not at its time limit.
  res = r.run({"yes"}, 60s);
  CHECK_FALSE(res.ok());
  CHECK_FALSE(res.timed_out);
  CHECK_THAT(res.describe(), Catch::Contains("yes printed more than 64 MiB"));
  // 64 MiB itself is kept whole.
  res = r.run({"head", "-c", "67108864", "/dev/zero"}, 60s);
  CHECK(res.ok());
  CHECK(res.out.size() == 67108864u);
}
