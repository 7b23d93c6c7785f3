// `ddpctl fetch RUN --on HOST` against a login host that answers anything: a
// fake ssh program (DDPCTL_SSH_COMMAND) sends a prepared tar, hostile or
// sound, through the real process runner. What it sends is data: fetch takes
// the asked runs' regular files and folders, or nothing.
#include "catch.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

#include "base/files.hpp"
#include "helpers.hpp"
#include "base/process.hpp"
#include "base/sized_stream.hpp"
#include "remote/remote_fetch.hpp"
#include "tar_fixtures.hpp"

using namespace ddpctl;
namespace fs = std::filesystem;

namespace {

using test::write;
using test::slurp;

std::string member(const std::string& name, char type, const std::string& data = "", unsigned mode = 0644,
                   const std::string& link = "") {
  return test::tar_member(name, type, data, mode, link);
}
std::string end_of_archive() { return test::tar_end(); }

// A login host: `ssh -O check` finds a master; every command there prints
// what the sh script `answer` prints. fetch's answer begins with its size
// line ("ddpctl-fetch BYTES", the most its tar will be).
struct FakeLoginHost {
  test::TempDir dir;
  std::string ssh = dir.path + "/ssh";
  FakeLoginHost() {
    write(ssh, "#!/bin/sh\ncase \" $* \" in *\" -O \"*) exit 0 ;; esac\nexec sh \"$0.answer\"\n");
    fs::permissions(ssh, fs::perms::owner_all);
  }
  void answer_script(const std::string& sh) { write(ssh + ".answer", sh); }
  // Answers with these bytes, after their size.
  void answer(const std::string& tar) {
    write(dir.path + "/answer.tar", tar);
    answer_script(fmt::format("echo 'ddpctl-fetch {}'; exec cat '{}/answer.tar'\n", tar.size(), dir.path));
  }
};

// This machine's folder: runs/ with a run of its own (victim) and a
// snapshot store, each holding "mine".
struct Here {
  test::TempDir dir;
  std::string runs = dir.path + "/runs";
  Here() {
    write(runs + "/victim/run.json", "mine");
    write(runs + "/.snapshots/x/file", "mine");
  }
  bool untouched() const {
    return slurp(runs + "/victim/run.json") == "mine" && slurp(runs + "/.snapshots/x/file") == "mine" &&
           !fs::exists(runs + "/victim/.fetched") && !fs::exists(runs + "/r1");
  }
  // What fetch left of its own work in runs/ (.incoming.*).
  std::vector<std::string> leftovers() const {
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(runs))
      if (e.path().filename().string().rfind(".incoming", 0) == 0) left.push_back(e.path().filename().string());
    return left;
  }
};

std::vector<std::string> fetch(const FakeLoginHost& host, const Here& here, const std::vector<std::string>& targets,
                               std::ostream& out) {
  FetchRequest f;
  f.target.host = "login";
  f.target.dir_option = "proj";
  f.target.home = host.dir.path;
  f.target.ssh_command = host.ssh;
  f.target.cwd = here.dir.path;
  f.targets = targets;
  f.local_runs_root = here.runs;
  SystemCommandRunner local;
  return fetch_runs(f, local, out);
}

// fetch's UserError for this answer to `fetch r1` ("" when it fetched).
std::string refusal(const FakeLoginHost& host, const Here& here) {
  std::ostringstream out;
  return test::user_error_of([&] { fetch(host, here, {"r1"}, out); });
}

const std::string kRun = member("r1/", '5', "", 0755) + member("r1/run.json", '0', "{}\n");

}  // namespace

TEST_CASE("fetch: a run the host sends comes here whole, marked, replacing the older copy") {
  FakeLoginHost host;
  Here here;
  write(here.runs + "/r1/old.txt", "an older copy's");
  host.answer(kRun + member("r1/scripts/", '5', "", 0755) + member("r1/scripts/cell.sbatch", '0', "#!/bin/bash\n", 0755) +
              member("r1/metrics.jsonl", '0', "{\"loss\": 1}\n", 0600) + end_of_archive());
  std::ostringstream out;
  CHECK(fetch(host, here, {"r1"}, out) == std::vector<std::string>{"r1"});
  CHECK(slurp(here.runs + "/r1/run.json") == "{}\n");
  CHECK(slurp(here.runs + "/r1/metrics.jsonl") == "{\"loss\": 1}\n");
  CHECK_FALSE(fs::exists(here.runs + "/r1/old.txt"));
  CHECK(slurp(here.runs + "/r1/.fetched").find("\"host\": \"login\"") != std::string::npos);
  CHECK((fs::status(here.runs + "/r1/scripts/cell.sbatch").permissions() & fs::perms::owner_exec) != fs::perms::none);
  CHECK((fs::status(here.runs + "/r1/run.json").permissions() & fs::perms::owner_exec) == fs::perms::none);
  CHECK(out.str().find("fetched r1 from login: 3 files") != std::string::npos);
  CHECK(here.leftovers().empty());
}

TEST_CASE("fetch: a run asked by name may come as its newest id, and GNU tar's long names and pax headers are read") {
  FakeLoginHost host;
  Here here;
  std::string id = "train-20261127T110000Z-bbbbbb";
  std::string deep = id + "/cells/" + std::string(120, 'c') + "/" + std::string(90, 'd') + ".json";
  write(host.dir.path + "/there/" + deep, "deep\n");
  write(host.dir.path + "/there/" + id + "/run.json", "{}\n");
  for (const char* format : {"gnu", "pax"}) {
    host.answer_script(fmt::format("echo 'ddpctl-fetch 100000'; cd '{}/there' && exec tar --format={} -cf - {}\n",
                                   host.dir.path, format, id));
    std::ostringstream out;
    CHECK(fetch(host, here, {"train"}, out) == std::vector<std::string>{id});
    CHECK(slurp(here.runs + "/" + deep) == "deep\n");
  }
}

TEST_CASE("fetch: a run of more than 64 MiB comes whole, through a file, not the runner's memory") {
  FakeLoginHost host;
  Here here;
  std::string big = host.dir.path + "/there/r1/big";
  write(host.dir.path + "/there/r1/run.json", "{}\n");
  // 65 MiB and a tail: a sparse file (nothing written here but the tail),
  // sent as 65 MiB of tar.
  test::run_bash("truncate -s 65M \"$1\" && printf tail >>\"$1\"", {big});
  host.answer_script(fmt::format("echo 'ddpctl-fetch {}'; cd '{}/there' && exec tar -cf - r1\n", (65 << 20) + 30000,
                                 host.dir.path));
  std::ostringstream out;
  CHECK(fetch(host, here, {"r1"}, out) == std::vector<std::string>{"r1"});
  CHECK(fs::file_size(here.runs + "/r1/big") == (65u << 20) + 4);
  std::ifstream in(here.runs + "/r1/big", std::ios::binary);
  in.seekg(-4, std::ios::end);
  std::string tail(4, '\0');
  in.read(tail.data(), 4);
  CHECK(tail == "tail");
  CHECK(out.str().find("fetched r1 from login: 2 files, 65 MiB") != std::string::npos);
}

TEST_CASE("fetch: an endless answer is stopped at the size it declared, or at once without one") {
  FakeLoginHost host;
  Here here;
  SECTION("zeros without end, no size line") {
    host.answer_script("exec cat /dev/zero\n");
    CHECK_THAT(refusal(host, here), Catch::Matchers::Contains("does not begin with its size (\"ddpctl-fetch BYTES\")"));
  }
  SECTION("a small size declared, then zeros without end") {
    host.answer_script("echo 'ddpctl-fetch 1000'; exec cat /dev/zero\n");
    CHECK_THAT(refusal(host, here), Catch::Matchers::Contains("it sent more than the 1000 B it declared"));
  }
  SECTION("more declared than this disk has") {
    host.answer_script("echo 'ddpctl-fetch 999999999999999'; exec cat /dev/zero\n");
    CHECK_THAT(refusal(host, here), Catch::Matchers::Contains("it declares") && Catch::Matchers::Contains("free"));
  }
  CHECK(here.untouched());
  CHECK(here.leftovers().empty());
}

TEST_CASE("fetch: the login host's size line bounds its tar, counted as GNU tar writes it") {
  // The real sh line fetch runs there, on runs of this machine: the size it
  // declares is at least the tar it then sends.
  test::TempDir there;
  write(there.path + "/p/runs/r1/run.json", "{}\n");
  write(there.path + "/p/runs/r1/" + std::string(150, 'n') + "/x", std::string(70000, 'x'));
  write(there.path + "/p/runs/r1/workdir/huge", std::string(300000, 'w'));  // left out, as tar leaves it out
  std::vector<std::string> argv = remote_fetch_argv(there.path + "/p", "runs", {"r1"});
  SystemCommandRunner local;
  CommandResult r = local.run(argv, std::chrono::seconds(30));
  REQUIRE(r.ok());
  size_t nl = r.out.find('\n');
  REQUIRE(nl != std::string::npos);
  auto declared = declared_size(r.out.substr(0, nl), kFetchSizeWord);
  REQUIRE(declared);
  const long long tar = static_cast<long long>(r.out.size() - nl - 1);
  CHECK(*declared >= tar);
  CHECK(*declared < tar + 200000);  // not the left-out workdir's
}

TEST_CASE("fetch: an answer cut short is an error, and nothing is replaced") {
  FakeLoginHost host;
  Here here;
  std::string whole = kRun + member("r1/metrics.jsonl", '0', std::string(3000, 'm')) + end_of_archive();
  host.answer(whole.substr(0, 2048));
  std::string err = refusal(host, here);
  CHECK(err.find("cut short") != std::string::npos);
  CHECK(here.untouched());
  CHECK(here.leftovers().empty());
}

TEST_CASE("fetch: members outside the run asked for are refused, and nothing is replaced") {
  FakeLoginHost host;
  Here here;
  SECTION("another run here") { host.answer(kRun + member("victim/run.json", '0', "theirs") + end_of_archive()); }
  SECTION("the snapshot store") { host.answer(kRun + member(".snapshots/x/file", '0', "theirs") + end_of_archive()); }
  SECTION("an absolute name") { host.answer(kRun + member("/tmp/ddpctl-fetch-abs", '0', "x") + end_of_archive()); }
  SECTION("a '..' in the name") { host.answer(kRun + member("r1/../victim/run.json", '0', "theirs") + end_of_archive()); }
  SECTION("ddpctl's own mark") { host.answer(kRun + member("r1/.fetched", '5', "", 0755) + end_of_archive()); }
  std::string err = refusal(host, here);
  CHECK(err.find("nothing was replaced here") != std::string::npos);
  CHECK(here.untouched());
  CHECK(here.leftovers().empty());
  CHECK_FALSE(fs::exists("/tmp/ddpctl-fetch-abs"));
}

TEST_CASE("fetch: links, devices and fifos are refused, each named with what it is") {
  FakeLoginHost host;
  Here here;
  test::TempDir elsewhere;
  SECTION("the run a symbolic link") {
    host.answer(member("r1", '2', "", 0777, elsewhere.path) + end_of_archive());
    CHECK(refusal(host, here).find("'r1': a symbolic link to '" + elsewhere.path + "'") != std::string::npos);
    CHECK_FALSE(fs::exists(elsewhere.path + "/.fetched"));
  }
  SECTION("a symbolic link in the run") {
    host.answer(kRun + member("r1/log", '2', "", 0777, "/etc/passwd") + end_of_archive());
    CHECK(refusal(host, here).find("'r1/log': a symbolic link to '/etc/passwd'") != std::string::npos);
  }
  SECTION("a hard link") {
    host.answer(kRun + member("r1/log", '1', "", 0644, "etc/passwd") + end_of_archive());
    CHECK(refusal(host, here).find("'r1/log': a hard link to 'etc/passwd'") != std::string::npos);
  }
  SECTION("a device") {
    host.answer(kRun + member("r1/null", '3') + end_of_archive());
    CHECK(refusal(host, here).find("'r1/null': a character device") != std::string::npos);
  }
  SECTION("a fifo") {
    host.answer(kRun + member("r1/pipe", '6') + end_of_archive());
    CHECK(refusal(host, here).find("'r1/pipe': a fifo") != std::string::npos);
  }
  CHECK(here.untouched());
  CHECK(here.leftovers().empty());
}

TEST_CASE("fetch: a run that is a plain file is refused, with nothing left behind") {
  FakeLoginHost host;
  Here here;
  host.answer(member("r1", '0', "not a folder") + end_of_archive());
  std::string err = refusal(host, here);
  CHECK(err.find("'r1': a file, not a run's folder") != std::string::npos);
  CHECK(here.untouched());
  CHECK(here.leftovers().empty());
}

TEST_CASE("fetch: names with control characters are refused and shown escaped") {
  FakeLoginHost host;
  Here here;
  host.answer(kRun + member("r1/\x1b]0;owned\x07", '0', "x") + end_of_archive());
  std::string err = refusal(host, here);
  CHECK(err.find("'r1/\\u{001b}]0;owned\\u{0007}'") != std::string::npos);
  CHECK(err.find('\x1b') == std::string::npos);
  CHECK(here.untouched());
  // Nor is a name with one asked for.
  std::ostringstream out;
  err = test::user_error_of([&] { fetch(host, here, {"r1\x1b[2J"}, out); });
  CHECK(err.find("'r1\\u{001b}[2J': is not a run's id, name or prefix") != std::string::npos);
}

TEST_CASE("fetch: a file's set-id and sticky bits do not come, its executable bit does") {
  FakeLoginHost host;
  Here here;
  host.answer(kRun + member("r1/tool", '0', "#!/bin/sh\n", 07755) + member("r1/dir/", '5', "", 07777) +
              end_of_archive());
  std::ostringstream out;
  mode_t umask_was = ::umask(022);
  fetch(host, here, {"r1"}, out);
  ::umask(umask_was);
  struct stat st {};
  REQUIRE(::stat((here.runs + "/r1/tool").c_str(), &st) == 0);
  CHECK((st.st_mode & 07000) == 0);
  CHECK((st.st_mode & S_IXUSR) != 0);
  REQUIRE(::stat((here.runs + "/r1/dir").c_str(), &st) == 0);
  CHECK((st.st_mode & 07000) == 0);
  CHECK((st.st_mode & S_IWOTH) == 0);
}

TEST_CASE("fetch: what is taken of an answer, member by member") {
  using T = TarMember::Type;
  auto m = [](const std::string& name, T type, const std::string& link = "") {
    TarMember t;
    t.name = name, t.type = type, t.link = link;
    t.flag = type == T::Other ? 'V' : '0';
    return t;
  };
  struct Row {
    TarMember member;
    std::string refused;  // "" when taken
  };
  const std::vector<Row> rows = {
      {m("train-2", T::Folder), ""},
      {m("train-2/run.json", T::File), ""},
      {m("train-2/cells/0001/cell.sbatch", T::File), ""},
      {m("train-2/.snapshot.json", T::File), ""},
      {m("train-2/run.json", T::File), ""},  // twice, as tar may send it: the later wins
      {m("train-3/run.json", T::File), "'train-3/run.json': one run more than the 1 asked for"},
      {m("victim/run.json", T::File), "'victim/run.json': not in a run asked for ('train')"},
      {m(".snapshots/x", T::Folder), "'.snapshots/x': not in a run asked for ('train')"},
      {m("/etc/passwd", T::File), "'/etc/passwd': an absolute name"},
      {m("train-2/../victim", T::Folder), "'train-2/../victim': a name with a '..' component"},
      {m("train-2/./x", T::File), "'train-2/./x': a name with a '.' component"},
      {m("train-2//x", T::File), "'train-2//x': a name with an empty component"},
      {m("train-2/x\n", T::File), "'train-2/x\\n': a name with a control character"},
      {m("train-2/\xff", T::File), "'train-2/\\xff': a name that is not UTF-8"},
      {m("train-2/l", T::SymbolicLink, "/"), "'train-2/l': a symbolic link to '/'"},
      {m("train-2/h", T::HardLink, "x"), "'train-2/h': a hard link to 'x'"},
      {m("train-2/b", T::BlockDevice), "'train-2/b': a block device"},
      {m("train-2/v", T::Other), "'train-2/v': a member of tar type 'V'"},
      {m("train-2/.fetched", T::File), "'train-2/.fetched': ddpctl's own mark, which a login host does not send"},
      {m("train-2/run.json/x", T::File), "'train-2/run.json/x': both a file and a folder"},
      {m("train-2/cells", T::File), "'train-2/cells': both a file and a folder"},
  };
  std::vector<TarMember> members;
  for (const auto& r : rows) members.push_back(r.member);
  FetchAnswer a = check_fetch_answer(members, {"train"}, true);
  CHECK(a.runs == std::vector<std::string>{"train-2"});
  std::vector<std::string> expected;
  for (const auto& r : rows)
    if (!r.refused.empty()) expected.push_back(r.refused);
  CHECK(a.refused == expected);
  // A refresh asks for ids: a name's other runs are not them.
  a = check_fetch_answer({m("train-2", T::Folder), m("train-2-x", T::Folder)}, {"train-2"}, false);
  CHECK(a.refused == std::vector<std::string>{"'train-2-x': not in a run asked for ('train-2')"});
  // The run itself is a folder.
  a = check_fetch_answer({m("train", T::File)}, {"train"}, true);
  CHECK(a.refused == std::vector<std::string>{"'train': a file, not a run's folder"});
}

TEST_CASE("fetch: the login host sends a run once however it was named, and a hard link as the file it is") {
  test::TempDir home;
  std::string run = home.path + "/proj/runs/train-20261127T110000Z-bbbbbb";
  write(run + "/run.json", "{}\n");
  test::run_bash("ln \"$1/run.json\" \"$1/same.json\"", {run});
  std::vector<std::string> args = {home.path};
  for (const auto& w : remote_fetch_argv("~/proj", "runs", {"train", "train-20261127T110000Z-bbbbbb"}))
    args.push_back(w);
  test::run_bash("cd \"$1\"; HOME=$1; shift; \"$@\" >\"$HOME/answer.tar\"", args);
  const std::string answer = slurp(home.path + "/answer.tar");
  TarListing l = read_tar_members(home.path + "/answer.tar", static_cast<long long>(answer.find('\n')) + 1);
  REQUIRE(l.problem.empty());
  CHECK(l.members.size() == 3);  // the folder and its two files, once
  for (const auto& m : l.members) CHECK(m.type != TarMember::Type::HardLink);
  CHECK(check_fetch_answer(l.members, {"train", "train-20261127T110000Z-bbbbbb"}, true).refused.empty());
}

TEST_CASE("fetch: what the login host says of a failure is shown as plain text") {
  FakeLoginHost host;
  Here here;
  host.answer_script("printf 'ddpctl: error: no run \\033[2J here\\n' >&2; exit 1\n");
  std::string err = refusal(host, here);
  CHECK(err.find("no run ?[2J here") != std::string::npos);
  CHECK(err.find('\x1b') == std::string::npos);
  CHECK(here.leftovers().empty());
}
