// Submitting from the user's machine: the login host's sh lines (run here
// with sh, as the login host's would run them), the words the ddpctl there
// runs, the snapshot record that travels, and fetching runs back.
#include "catch.hpp"

#include <filesystem>
#include <fstream>

#include "fake_runner.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "remote/remote.hpp"
#include "remote/remote_fetch.hpp"
#include "remote/remote_install.hpp"
#include "remote/remote_submit.hpp"
#include "base/sha256.hpp"
#include "script/snapshot.hpp"

using namespace ddpctl;
namespace fs = std::filesystem;

namespace {

// Runs argv (a login host's `sh -c LINE ...`) here in `cwd` with HOME=home
// and `input` on stdin; returns its stdout, stderr and "rc=N".
std::string run_there(const std::string& home, const std::string& cwd, const std::vector<std::string>& argv,
                      const std::string& input = "/dev/null") {
  std::vector<std::string> args = {home, cwd, input};
  args.insert(args.end(), argv.begin(), argv.end());
  return test::run_bash("h=$1; c=$2; i=$3; shift 3; cd \"$c\"; set +e; HOME=$h \"$@\" <\"$i\" 2>&1; echo \"rc=$?\"", args);
}

using test::write;

}  // namespace

TEST_CASE("remote submit: the folder there is a word its sh expands, before the home there is known") {
  CHECK(remote_dir_word("/home/alice/proj/a", "/home/alice", "") == "~/proj/a");
  CHECK(remote_dir_word("/home/alice", "/home/alice", "") == "~");
  CHECK(remote_dir_word("/x", "/home/alice", "/scratch/a") == "/scratch/a");
  CHECK(remote_dir_word("/x", "/home/alice", "proj") == "~/proj");
  test::TempDir home;
  std::string out = test::run_bash("HOME=\"$1\" sh -c \"$2\"'echo \"$d\"' sh \"$3\"", {home.path, kRemoteDirSh, "~/p q"});
  CHECK(out == home.path + "/p q\n");
  out = test::run_bash("HOME=\"$1\" sh -c \"$2\"'echo \"$d\"' sh \"$3\"", {home.path, kRemoteDirSh, "~"});
  CHECK(out == home.path + "\n");
}

TEST_CASE("remote submit: the probe also says the folder and whether its store has the snapshot") {
  test::TempDir home;
  fs::create_directories(home.path + "/proj/runs/.snapshots/abc123");
  auto argv = remote_probe_argv("0.1.0 (git 1a2b3c4d5e6f)", "~/proj", "runs", "abc123");
  RemoteSide s = parse_remote_probe(run_there(home.path, home.path, argv));
  CHECK(s.dir == home.path + "/proj");
  CHECK(s.snapshot_present);
  argv = remote_probe_argv("0.1.0 (git 1a2b3c4d5e6f)", "~/proj", "runs", "def456");
  CHECK_FALSE(parse_remote_probe(run_there(home.path, home.path, argv)).snapshot_present);
}

TEST_CASE("remote submit: specs go to their place under this folder, and nowhere else") {
  test::TempDir dir;
  write(dir.path + "/proj/sub/train.yaml", "name: t\n");
  write(dir.path + "/other.yaml", "name: o\n");
  auto places = remote_spec_places({"sub/train.yaml", dir.path + "/proj/sub/train.yaml"}, dir.path + "/proj");
  CHECK(places == std::vector<std::string>{"sub/train.yaml", "sub/train.yaml"});
  std::string err = test::user_error_of([&] { remote_spec_places({dir.path + "/other.yaml"}, dir.path + "/proj"); });
  CHECK(err.find("other.yaml") != std::string::npos);
  CHECK(err.find("is not in this folder") != std::string::npos);
  CHECK(test::user_error_of([&] { remote_spec_places({"nope.yaml"}, dir.path); }).find("nope.yaml: no such file") !=
        std::string::npos);
}

TEST_CASE("remote submit: a spec whose name begins with - reaches the ddpctl there as a file, not an option") {
  test::TempDir dir;
  write(dir.path + "/-n.yaml", "name: t\n");
  auto places = remote_spec_places({"./-n.yaml"}, dir.path);
  CHECK(places == std::vector<std::string>{"./-n.yaml"});
  CHECK(remote_submit_words({"submit", "./-n.yaml"}, {"./-n.yaml"}, places, "") ==
        std::vector<std::string>{"submit", "./-n.yaml"});
}

TEST_CASE("remote submit: the ddpctl there runs the user's words with the specs' places and the snapshot sent") {
  std::vector<std::string> words = {"submit", "./train.yaml", "--set", "nodes=2", "--again"};
  CHECK(remote_submit_words(words, {"./train.yaml"}, {"train.yaml"}, "runs/.incoming/t/snapshot.json") ==
        std::vector<std::string>{"submit", "--snapshot-from", "runs/.incoming/t/snapshot.json", "train.yaml", "--set",
                                 "nodes=2", "--again"});
  CHECK(remote_submit_words({"race", "a.yaml", "b.yaml"}, {"a.yaml", "b.yaml"}, {"a.yaml", "b.yaml"}, "") ==
        std::vector<std::string>{"race", "a.yaml", "b.yaml"});
}

TEST_CASE("remote submit: the snapshot arrives whole in the store, or not at all") {
  test::TempDir home, here;
  write(here.path + "/abc/train.py", "print(1)\n");
  write(here.path + "/abc/lib/x.py", "x = 1\n");
  test::run_bash("tar -cf \"$1/s.tar\" -C \"$1\" abc", {here.path});
  std::string out = run_there(home.path, home.path, remote_snapshot_upload_argv("~/proj", "runs", "abc", 2), here.path + "/s.tar");
  CHECK(out.find("rc=0") != std::string::npos);
  CHECK(read_file(home.path + "/proj/runs/.snapshots/abc/lib/x.py") == "x = 1\n");
  // Sent again (another ddpctl at once): the store keeps its own.
  out = run_there(home.path, home.path, remote_snapshot_upload_argv("~/proj", "runs", "abc", 2), here.path + "/s.tar");
  CHECK(out.find("rc=0") != std::string::npos);
  CHECK_FALSE(fs::exists(home.path + "/proj/runs/.snapshots/abc/abc"));
  // Short of files: refused, nothing stored.
  out = run_there(home.path, home.path, remote_snapshot_upload_argv("~/p2", "runs", "abc", 3), here.path + "/s.tar");
  CHECK(out.find("the snapshot arrived with 2 of its 3 files") != std::string::npos);
  CHECK(out.find("rc=3") != std::string::npos);
  CHECK_FALSE(fs::exists(home.path + "/p2/runs/.snapshots/abc"));
  CHECK(fs::is_empty(home.path + "/p2/runs/.snapshots"));
}

TEST_CASE("remote submit: the submit there puts the specs in place, keeps a different one, and runs ddpctl there") {
  test::TempDir home, here;
  write(here.path + "/b/spec.0", "name: new\n");
  write(here.path + "/b/snapshot.json", "{}\n");
  test::run_bash("tar -cf \"$1/b.tar\" -C \"$1/b\" .", {here.path});
  write(home.path + "/proj/sub/train.yaml", "name: old\n");
  // A stand-in for ddpctl there: where it runs, its words, and its stdin.
  write(home.path + "/bin/ddpctl", "#!/bin/sh\necho \"cwd=$(pwd)\"; echo \"args=$*\"; "
                                   "test -f runs/.incoming/tok/snapshot.json && echo record-there; cat; exit 7\n");
  fs::permissions(home.path + "/bin/ddpctl", fs::perms::owner_all);
  auto argv = remote_submit_argv("~/proj", "runs", "tok", {"sub/train.yaml"}, home.path + "/bin/ddpctl",
                                 {"submit", "--snapshot-from", "runs/.incoming/tok/snapshot.json", "sub/train.yaml"});
  std::string out = run_there(home.path, home.path, argv, here.path + "/b.tar");
  CHECK(out.find("cwd=" + home.path + "/proj\n") != std::string::npos);
  CHECK(out.find("args=submit --snapshot-from runs/.incoming/tok/snapshot.json sub/train.yaml\n") != std::string::npos);
  CHECK(out.find("record-there") != std::string::npos);
  CHECK(out.find("rc=7") != std::string::npos);  // ddpctl's own exit status
  CHECK(read_file(home.path + "/proj/sub/train.yaml") == "name: new\n");
  CHECK(out.find("differed from the spec sent; it is kept as " + home.path + "/proj/sub/train.yaml.replaced-") !=
        std::string::npos);
  int kept = 0;
  for (const auto& e : fs::directory_iterator(home.path + "/proj/sub")) {
    if (e.path().filename().string().rfind("train.yaml.replaced-", 0) != 0) continue;
    kept++;
    CHECK(read_file(e.path().string()) == "name: old\n");
  }
  CHECK(kept == 1);
  CHECK_FALSE(fs::exists(home.path + "/proj/runs/.incoming/tok"));  // the bundle is removed
  // The same spec again: nothing more is kept aside.
  out = run_there(home.path, home.path, argv, here.path + "/b.tar");
  CHECK(out.find("differed") == std::string::npos);
}

TEST_CASE("remote submit: the snapshot's record names its store there and keeps where it was taken") {
  test::TempDir dir;
  Snapshot snap;
  snap.id = "0123456789abcdef";
  snap.mode = "git";
  snap.dir = "/laptop/runs/.snapshots/0123456789abcdef";
  snap.code_dir = snap.dir + "/sub";
  snap.files = 3;
  snap.bytes = 120;
  snap.commit = "89abcdef89abcdef";
  snap.branch = "main";
  snap.dirty = true;
  snap.diff = "diff --git a/x b/x\n";
  write(dir.path + "/proj/sub/runs/.incoming/t/snapshot.json",
        snapshot_transfer_record(snap, "runs/.snapshots/0123456789abcdef", "laptop:/home/alice/proj/sub"));
  std::string record = dir.path + "/proj/sub/runs/.incoming/t/snapshot.json";
  // Not in the store there: said, naming the option.
  std::string err = test::user_error_of([&] { given_snapshot(record, dir.path + "/proj/sub"); });
  CHECK(err.find("--snapshot-from: the snapshot 0123456789abcdef is not in " + dir.path +
                 "/proj/sub/runs/.snapshots/0123456789abcdef") != std::string::npos);
  fs::create_directories(dir.path + "/proj/sub/runs/.snapshots/0123456789abcdef/sub");
  SnapshotDecision d = given_snapshot(record, dir.path + "/proj/sub");
  REQUIRE(d.snapshot);
  CHECK(d.snapshot->dir == dir.path + "/proj/sub/runs/.snapshots/0123456789abcdef");
  CHECK(d.snapshot->code_dir == d.snapshot->dir + "/sub");
  CHECK(d.snapshot->prefix() == "sub");
  CHECK(d.snapshot->live_dir == dir.path + "/proj");  // the tree's top there, as here
  CHECK(d.snapshot->commit == "89abcdef89abcdef");
  CHECK(d.snapshot->dirty);
  CHECK(d.snapshot->diff == snap.diff);
  CHECK(d.snapshot->sent_from == "laptop:/home/alice/proj/sub");
  CHECK(d.snapshot->reused);
  write(dir.path + "/bad.json", "{\"id\": \"x\"}");
  CHECK(test::user_error_of([&] { given_snapshot(dir.path + "/bad.json", dir.path); }).find("not a snapshot record") !=
        std::string::npos);
}

TEST_CASE("remote install: the portable build is checked, then moved into place whole") {
  test::TempDir home, here;
  const std::string version = "ddpctl 0.1.0 (git 1a2b3c4d5e6f)";
  write(here.path + "/ddpctl-0.1.0/bin/ddpctl", "#!/bin/sh\necho '" + version + "'\n");
  fs::permissions(here.path + "/ddpctl-0.1.0/bin/ddpctl", fs::perms::owner_all);
  write(here.path + "/ddpctl-0.1.0/share/ddpctl/templates/x", "t\n");
  test::run_bash("tar -czf \"$1/p.tgz\" -C \"$1\" ddpctl-0.1.0", {here.path});
  std::string tgz = here.path + "/p.tgz";
  // Damaged on the way (another checksum): nothing installed.
  std::string out = run_there(home.path, home.path, remote_install_argv("0.1.0-1a2b3c4d5e6f", std::string(64, '0'), version), tgz);
  CHECK(out.find("the portable build arrived damaged") != std::string::npos);
  CHECK(out.find("rc=3") != std::string::npos);
  CHECK_FALSE(fs::exists(home.path + "/.local/share/ddpctl/0.1.0-1a2b3c4d5e6f"));
  // Another version inside: nothing installed.
  std::string sum = sha256_file_hex(tgz);
  out = run_there(home.path, home.path, remote_install_argv("0.1.0-1a2b3c4d5e6f", sum, "ddpctl 0.2.0 (git x)"), tgz);
  CHECK(out.find("says '" + version + "', not 'ddpctl 0.2.0 (git x)'") != std::string::npos);
  CHECK_FALSE(fs::exists(home.path + "/.local/share/ddpctl/0.1.0-1a2b3c4d5e6f"));
  // Whole: installed under the version's folder, and says where.
  out = run_there(home.path, home.path, remote_install_argv("0.1.0-1a2b3c4d5e6f", sum, version), tgz);
  CHECK(out.find("installed=" + home.path + "/.local/share/ddpctl/0.1.0-1a2b3c4d5e6f/bin/ddpctl") != std::string::npos);
  CHECK(fs::exists(home.path + "/.local/share/ddpctl/0.1.0-1a2b3c4d5e6f/share/ddpctl/templates/x"));
  // Twice: the first install stays.
  out = run_there(home.path, home.path, remote_install_argv("0.1.0-1a2b3c4d5e6f", sum, version), tgz);
  CHECK(out.find("rc=0") != std::string::npos);
  CHECK_FALSE(fs::exists(home.path + "/.local/share/ddpctl/0.1.0-1a2b3c4d5e6f/ddpctl-0.1.0"));
  // Nothing left behind from the transfers.
  int left = 0;
  for (const auto& e : fs::directory_iterator(home.path + "/.local/share/ddpctl"))
    if (e.path().filename().string().rfind(".incoming", 0) == 0) left++;
  CHECK(left == 0);
}

TEST_CASE("remote install: only a static ddpctl installed with its data is sent as it is") {
  CHECK_FALSE(executable_is_static("/bin/sh"));
  if (fs::exists("/sbin/ldconfig")) CHECK(executable_is_static("/sbin/ldconfig"));  // Debian's is static-pie
  CHECK_FALSE(executable_is_static("/nonexistent"));
  test::TempDir dir;
  test::FakeRunner none;  // nothing is packed: a call would fail the test
  std::string err = test::user_error_of([&] { find_portable_build("", "/bin/sh", "/usr", dir.path, none); });
  CHECK(err.find("this ddpctl is not the portable build") != std::string::npos);
  CHECK(err.find("DDPCTL_PORTABLE") != std::string::npos);
  err = test::user_error_of([&] { find_portable_build(dir.path + "/none.tgz", "", "", dir.path, none); });
  CHECK(err.find("DDPCTL_PORTABLE: " + dir.path + "/none.tgz is not a file") != std::string::npos);
}

TEST_CASE("fetch: the login host sends the runs named, newest of a name, without their working directories") {
  test::TempDir home;
  std::string runs = home.path + "/proj/runs";
  write(runs + "/train-20261127T100000Z-aaaaaa/run.json", "{}\n");
  write(runs + "/train-20261127T110000Z-bbbbbb/run.json", "{}\n");
  write(runs + "/train-20261127T110000Z-bbbbbb/metrics.jsonl", "{\"loss\": 1}\n");
  write(runs + "/train-20261127T110000Z-bbbbbb/workdir/train.py", "code\n");
  std::vector<std::string> args = {home.path};
  for (const auto& w : remote_fetch_argv("~/proj", "runs", {"train"})) args.push_back(w);
  // Its size line first, then the tar.
  std::string out = test::run_bash("cd \"$1\"; HOME=$1; shift; \"$@\" | { IFS= read -r size; echo \"$size\"; tar -tf -; } | sort", args);
  CHECK(out.find("ddpctl-fetch ") != std::string::npos);
  CHECK(out.find("train-20261127T110000Z-bbbbbb/metrics.jsonl") != std::string::npos);
  CHECK(out.find("aaaaaa") == std::string::npos);
  CHECK(out.find("workdir") == std::string::npos);
  out = run_there(home.path, home.path, remote_fetch_argv("~/proj", "runs", {"nope"}));
  CHECK(out.find("ddpctl: error: 'nope': no run with this name or id under " + runs) != std::string::npos);
  CHECK(out.find("rc=1") != std::string::npos);
}

TEST_CASE("fetch: a refresh leaves out runs gone there, and sends nothing when none is left") {
  test::TempDir home;
  write(home.path + "/proj/runs/train-1/run.json", "{}\n");
  std::string out = run_there(home.path, home.path, remote_fetch_argv("~/proj", "runs", {"train-1", "gone-2"}, true));
  CHECK(out.find("rc=0") != std::string::npos);
  CHECK(out.find("train-1/run.json") != std::string::npos);  // the tar, as text
  out = run_there(home.path, home.path, remote_fetch_argv("~/proj", "runs", {"gone-2"}, true));
  CHECK(out == "rc=0\n");
}

TEST_CASE("fetch: the copies here are those fetch marked from that host's folder") {
  test::TempDir dir;
  write(dir.path + "/runs/a-1/.fetched", R"({"host": "login", "dir": "~/proj", "runs": "runs"})");
  write(dir.path + "/runs/b-2/.fetched", R"({"host": "login", "dir": "~/other", "runs": "runs"})");
  write(dir.path + "/runs/c-3/.fetched", R"({"host": "login2", "dir": "~/proj", "runs": "runs"})");
  write(dir.path + "/runs/d-4/run.json", "{}");  // a run of this machine's own
  write(dir.path + "/runs/e-5/.fetched", "not json");
  CHECK(fetched_copies(dir.path + "/runs", "login", "~/proj") == std::vector<std::string>{"a-1"});
  CHECK(fetched_copies(dir.path + "/none", "login", "~/proj").empty());
}
