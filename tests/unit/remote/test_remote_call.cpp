// --on HOST's one way to the login host (remote_call.hpp), through a scripted
// local runner and terminal: every ssh call ddpctl makes, the attached one
// too (ssh.hpp's TerminalRunner), with the exact words the login host's shell
// gets; what each command then does here (status refreshes its fetched
// copies, report --plot brings its file back, submit, doctor, fetch); and
// that what the host sends back is data, never a path to write to.
#include "catch.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fake_runner.hpp"
#include "helpers.hpp"
#include "base/text.hpp"
#include "remote/remote_call.hpp"
#include "remote/remote_fetch.hpp"
#include "remote/remote_submit.hpp"
#include "slurm/slurm.hpp"
#include "tar_fixtures.hpp"

using namespace ddpctl;
using test::FakeRunner;
namespace fs = std::filesystem;

namespace {

const std::string kCallVersion = "0.1.0 (git 1a2b3c4d5e6f)";
const std::string kProbe = "'sh' '-c' 'echo \"home=";             // the probe's remote line begins so
const std::string kInDir = "'sh' '-c' 'cd -- \"$1\" 2>/dev/null"; // the command's (remote_ddpctl_argv)
const std::string kCat = "'sh' '-c' 'cd -- \"$1\" && exec cat";    // bring_back_file's
const std::string kFetch = "'sh' '-c' 'd=$1;";                     // fetch's remote line begins so

using test::write;
using test::slurp;

// This terminal, scripted: a command run attached to it (--on's ssh call
// to the command there) is recorded and answered by `rules` (its exit
// status), and is in their calls too.
struct FakeTerminal : TerminalRunner {
  explicit FakeTerminal(FakeRunner& r) : rules(r) {}
  int run_attached(const std::vector<std::string>& argv) override {
    attached.push_back(argv);
    return rules.run(argv, std::chrono::milliseconds(0)).exit_code;
  }
  FakeRunner& rules;
  std::vector<std::vector<std::string>> attached;
};

// A login host behind the user's own open connection (`ssh -O check`
// succeeds): its home is /u/alice and its ddpctl this version. This
// folder is ~/proj here; the runs here under it.
struct Login {
  FakeRunner local;
  FakeTerminal terminal{local};
  test::TempDir home;
  RemoteTarget target;
  std::string runs = home.path + "/proj/runs";
  // What the probe answers (a test may change it).
  std::string probe =
      "home=/u/alice\nsystem=Linux x86_64\nddpctl=/usr/bin/ddpctl\nddpctl_version=ddpctl " + kCallVersion + "\n";
  Login() {
    fs::create_directories(home.path + "/proj");
    local.on("ssh", {"-O", "check"}, test::exits(0));
    local.on("ssh", {kProbe}, [this](const std::vector<std::string>&) { return test::exits(0, probe); });
    target.host = "login";
    target.home = home.path;
    target.version = kCallVersion;
    target.cwd = home.path + "/proj";
  }
  // The generic path: `ddpctl WORDS` there, then `after`.
  int call(const std::vector<std::string>& words, const AfterRemote& after, std::ostream& err, bool tty = false) {
    RemoteSession session(target, local, terminal);
    return run_remote_call({words, after}, session, tty, err);
  }
  // The local argv of each ssh call whose remote line begins with `line`.
  std::vector<std::vector<std::string>> calls_of(const std::string& line) const {
    std::vector<std::vector<std::string>> out;
    for (const auto& c : local.calls)
      for (const auto& w : c)
        if (w.rfind(line, 0) == 0) out.push_back(c);
    return out;
  }
};

}  // namespace

TEST_CASE("remote call: the command runs there attached, as the user's words, each single-quoted") {
  Login l;
  l.local.on("ssh", {kInDir}, test::exits(3));
  std::ostringstream err;
  CHECK(l.call({"cancel", "it's", "--cell", "a b"}, nullptr, err) == 3);
  REQUIRE(l.terminal.attached.size() == 1);
  const auto& argv = l.terminal.attached[0];
  REQUIRE(argv.size() == 7);
  CHECK(std::vector<std::string>(argv.begin(), argv.end() - 1) ==
        std::vector<std::string>{"ssh", "-o", "BatchMode=yes", "-n", "login", "--"});
  CHECK(ends_with(argv.back(), "; shift; exec \"$@\"' 'login' '/u/alice/proj' '/usr/bin/ddpctl' 'cancel' 'it'\\''s' "
                               "'--cell' 'a b'"));
  CHECK(err.str() == "ddpctl: ran on login in /u/alice/proj with /usr/bin/ddpctl through your open ssh connection to "
                     "login: 2 ssh call(s)\n");
  // On a terminal, ssh gets one (-tt) so that Ctrl-C reaches the command there.
  l.terminal.attached.clear();
  l.call({"logs", "r1", "-f"}, nullptr, err, true);
  REQUIRE(l.terminal.attached.size() == 1);
  CHECK(l.terminal.attached[0][3] == "-tt");
}

TEST_CASE("remote call: without this version there nothing runs, and a dropped connection says the command may have run") {
  Login l;
  l.probe = "home=/u/alice\nsystem=Linux x86_64\nddpctl=/usr/bin/ddpctl\nddpctl_version=ddpctl 0.0.9 (git 000000000000)\n";
  std::ostringstream err;
  std::string why = test::user_error_of([&] { l.call({"status"}, nullptr, err); });
  CHECK(why.find("--on: login has none of this version (/usr/bin/ddpctl is 0.0.9 (git 000000000000))") !=
        std::string::npos);
  CHECK(l.terminal.attached.empty());

  Login dropped;
  bool after_ran = false;
  dropped.local.on("ssh", {kInDir}, test::exits(255));
  why = test::user_error_of([&] {
    dropped.call({"cancel", "12"}, [&](RemoteSession&, const std::string&) {
      after_ran = true;
      return std::string();
    }, err);
  });
  CHECK(why.find("the ssh connection to login failed while the command ran there (ssh exit 255") != std::string::npos);
  CHECK_FALSE(after_ran);
}

TEST_CASE("remote call: what the caller does after runs only when the command there succeeded, with its folder there") {
  Login l;
  std::string dir_seen;
  AfterRemote after = [&](RemoteSession& s, const std::string& dir) {
    dir_seen = dir;
    CHECK(s.ssh().calls() == 2);  // the probe and the command, on the same connection
    return std::string("; did it");
  };
  int there = 1;  // the command's exit status there
  l.local.on("ssh", {kInDir}, [&](const std::vector<std::string>&) { return test::exits(there); });
  std::ostringstream err;
  CHECK(l.call({"report", "r1"}, after, err) == 1);
  CHECK(dir_seen.empty());
  there = 0;
  CHECK(l.call({"report", "r1"}, after, err) == 0);
  CHECK(dir_seen == "/u/alice/proj");
  CHECK(err.str().find("login; did it: 2 ssh call(s)\n") != std::string::npos);
}

TEST_CASE("remote call report --plot: the file is brought back to that name here, its bytes as the host sent them") {
  Login l;
  l.local.on("ssh", {kInDir}, test::exits(0));
  // The host answers with what may look like a path or a terminal's escape: it is the file's content.
  const std::string bytes = "../../victim/run.json\n\x1b[2J<svg/>\n";
  CommandResult cat = test::exits(0, bytes);
  l.local.on("ssh", {kCat}, [&](const std::vector<std::string>&) { return cat; });
  std::ostringstream err;
  CHECK(l.call({"report", "r1", "--plot", "out/s.svg"}, bring_back_after("out/s.svg"), err) == 0);
  auto cats = l.calls_of(kCat);
  REQUIRE(cats.size() == 1);
  CHECK(ends_with(cats[0].back(), "exec cat -- \"$2\"' 'sh' '/u/alice/proj' 'out/s.svg'"));
  CHECK(slurp(l.home.path + "/proj/out/s.svg") == bytes);
  size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(l.home.path)) files += e.is_regular_file();
  CHECK(files == 1);
  CHECK(err.str().find("; brought out/s.svg back: 3 ssh call(s)\n") != std::string::npos);
  // A file that cannot come says so, naming it; without --plot nothing is asked for.
  cat = test::exits(1, "", "cat: out/s.svg: No such file or directory");
  std::string why = test::user_error_of([&] { l.call({"report", "r1"}, bring_back_after("out/s.svg"), err); });
  CHECK(why.find("the command ran, but out/s.svg could not be brought back from login") != std::string::npos);
  CHECK(bring_back_after("") == nullptr);
}

TEST_CASE("remote call status: the copies here of that folder's runs are fetched again, what comes checked as data") {
  Login l;
  l.local.on("ssh", {kInDir}, test::exits(0));
  write(l.runs + "/r1/.fetched", R"({"host": "login", "dir": "~/proj", "runs": "runs"})");
  write(l.runs + "/r1/run.json", "old");
  write(l.runs + "/victim/run.json", "mine");
  std::string answer;
  l.local.on("ssh", {kFetch}, [&](const std::vector<std::string>&) {
    // Its size, then its tar (run_to_file writes what it prints into the answer's file).
    return test::exits(0, "ddpctl-fetch " + std::to_string(answer.size()) + "\n" + answer);
  });
  answer = test::tar_member("r1/", '5', "", 0755) + test::tar_member("r1/run.json", '0', "new") + test::tar_end();
  std::ostringstream err;
  CHECK(l.call({"status", "--json"}, refresh_copies_after(l.runs), err) == 0);
  auto refresh = l.calls_of("'sh' '-c' 'd=$1;");
  REQUIRE(refresh.size() == 1);
  CHECK(ends_with(refresh[0].back(), "exit $rc' 'sh' '~/proj' 'runs' 'r1'"));
  CHECK(slurp(l.runs + "/r1/run.json") == "new");
  CHECK(err.str().find("; refreshed the copies here of 1 run(s) in " + l.runs + ": 3 ssh call(s)\n") !=
        std::string::npos);

  // A member outside the run asked for is refused, and nothing is replaced.
  answer = test::tar_member("r1/", '5', "", 0755) + test::tar_member("r1/run.json", '0', "newer") +
           test::tar_member("victim/run.json", '0', "theirs") + test::tar_end();
  std::string why = test::user_error_of([&] { l.call({"status"}, refresh_copies_after(l.runs), err); });
  CHECK(why.find("'victim/run.json': not in a run asked for ('r1')") != std::string::npos);
  CHECK(slurp(l.runs + "/r1/run.json") == "new");
  CHECK(slurp(l.runs + "/victim/run.json") == "mine");

  // No copies of that folder here: no call for them.
  Login none;
  none.local.on("ssh", {kInDir}, test::exits(0));
  std::ostringstream quiet;
  CHECK(none.call({"status"}, refresh_copies_after(none.runs), quiet) == 0);
  CHECK(none.local.count("sh") == 0);
  CHECK(quiet.str().find(": 2 ssh call(s)\n") != std::string::npos);
}

TEST_CASE("remote call fetch: one ssh call asks for the runs by the words given, and takes only those runs") {
  Login l;
  std::string answer = test::tar_member("train-2/", '5', "", 0755) + test::tar_member("train-2/run.json", '0', "{}\n") +
                       test::tar_end();
  l.local.on("ssh", {kFetch}, [&](const std::vector<std::string>&) {
    return test::exits(0, "ddpctl-fetch " + std::to_string(answer.size()) + "\n" + answer);
  });
  fs::create_directories(l.runs);
  FetchRequest f;
  f.target = l.target;
  f.targets = {"train"};
  f.local_runs_root = l.runs;
  std::ostringstream out;
  CHECK(fetch_runs(f, l.local, out) == std::vector<std::string>{"train-2"});
  auto calls = l.calls_of("'sh' '-c' 'd=$1;");
  REQUIRE(calls.size() == 1);
  CHECK(ends_with(calls[0].back(), "exit $rc' 'sh' '~/proj' 'runs' 'train'"));
  CHECK(slurp(l.runs + "/train-2/run.json") == "{}\n");
  CHECK(out.str().find("ddpctl: through your open ssh connection to login: 1 ssh call(s)\n") != std::string::npos);
  // A link is refused, the run here stays as it was.
  answer = test::tar_member("train-2/", '5', "", 0755) + test::tar_member("train-2/run.json", '2', "", 0777, "/etc/passwd") +
           test::tar_end();
  CHECK(test::user_error_of([&] { fetch_runs(f, l.local, out); }).find("a symbolic link to '/etc/passwd'") !=
        std::string::npos);
  CHECK(slurp(l.runs + "/train-2/run.json") == "{}\n");
}

TEST_CASE("remote call submit: the specs go on the submit's stdin, and the ddpctl there gets their places") {
  Login l;
  l.probe += "dir=/u/\x1b[2Jalice/proj\n";
  l.local.on("tar", {"-cf"}, test::exits(0));
  int there = 0;  // ssh's exit status: the submit's there, or 255
  l.local.on("sh", {"exec \"$@\" <\"$0\""}, [&](const std::vector<std::string>&) { return test::exits(there); });
  write(l.home.path + "/proj/sub/train.yaml", "name: t\n");
  RemoteSubmit s;
  s.target = l.target;
  s.specs = {l.home.path + "/proj/sub/train.yaml"};
  s.words = {"submit", s.specs[0], "--dry-run"};  // as typed: the spec's word becomes its place there
  s.dry_run = true;
  std::ostringstream err;
  CHECK(run_remote_submit(s, l.local, err, l.terminal) == 0);
  REQUIRE(l.terminal.attached.size() == 1);
  const auto& argv = l.terminal.attached[0];
  // sh -c 'exec "$@" <"$0"' BUNDLE ssh OPTIONS HOST -- LINE: the bundle is the remote command's stdin.
  REQUIRE(argv.size() == 10);
  CHECK(argv[2] == "exec \"$@\" <\"$0\"");
  CHECK(ends_with(argv[3], "/bundle.tar"));
  CHECK(std::vector<std::string>(argv.begin() + 4, argv.end() - 1) ==
        std::vector<std::string>{"ssh", "-o", "BatchMode=yes", "login", "--"});
  CHECK(argv.back().find("' 'sh' '~/proj' 'runs' '") != std::string::npos);
  CHECK(ends_with(argv.back(), "' '1' 'sub/train.yaml' '/usr/bin/ddpctl' 'submit' 'sub/train.yaml' '--dry-run'"));
  // The folder as the host said it is shown as plain text.
  CHECK(err.str().find('\x1b') == std::string::npos);
  CHECK(err.str().find("ddpctl: ran on login in /u/?[2Jalice/proj with the cluster's /usr/bin/ddpctl") !=
        std::string::npos);
  CHECK(err.str().find("code: none sent (a dry run); 2 ssh call(s)\n") != std::string::npos);
  // A connection that drops while the ddpctl there submits.
  there = 255;
  CHECK(test::user_error_of([&] { run_remote_submit(s, l.local, err, l.terminal); }).find("the job may or may not be queued") !=
        std::string::npos);
}

TEST_CASE("remote call doctor: each Slurm command goes through the session as its words, each single-quoted") {
  Login l;
  CommandResult answer = test::exits(0, "ClusterName = x\n");
  l.local.on("ssh", {"'scontrol'"}, [&](const std::vector<std::string>&) { return answer; });
  RemoteSession session(l.target, l.local);
  SlurmClient slurm(session.ssh());
  CHECK(slurm.raw({"scontrol", "show", "config", "it's"}).out == "ClusterName = x\n");
  CHECK(l.local.calls.back() == std::vector<std::string>{"ssh", "-o", "BatchMode=yes", "-n", "login", "--",
                                                         "'scontrol' 'show' 'config' 'it'\\''s'"});
  CHECK(session.ssh().calls() == 1);
  // ssh's own failure is the connection's, not the command's.
  answer = test::exits(255, "", "ssh: connect to host login port 22: Connection refused");
  CommandResult r = slurm.raw({"scontrol", "show", "config"});
  CHECK(r.connection_failed);
  CHECK(r.describe().find("ssh to login failed") != std::string::npos);
}
