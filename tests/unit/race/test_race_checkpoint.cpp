// A re-race's checkpoint carried between sites (race_checkpoint.cpp,
// site_caller.cpp's relay; docs/race.md "When the winner is requeued"): the
// run's checkpoint folder, the stream's size line and its bound, what comes
// in taken whole as data or refused whole (the relay that stops a site
// sending more than it declared: tests/unit/sites/test_site_caller.cpp).
#include "catch.hpp"

#include <filesystem>
#include <sstream>

#include "helpers.hpp"
#include "tar_fixtures.hpp"
#include "base/diagnostics.hpp"
#include "base/files.hpp"
#include "base/text.hpp"
#include "race/race_checkpoint.hpp"

using namespace ddpctl;
namespace fs = std::filesystem;

namespace {

Run checkpoint_run(const std::string& dir, const std::string& export_line) {
  Run run;
  run.dir = dir;
  run.cwd = dir + "/submit";
  RunShape shape;
  shape.label = "1x4";
  shape.script = "job.sbatch";
  run.shapes.push_back(shape);
  fs::create_directories(dir);
  write_file_atomic(dir + "/job.sbatch", "#!/bin/bash\n" + export_line + "\nsrun ddp-train\n");
  return run;
}

}  // namespace

TEST_CASE("the checkpoint's stream: its size first, then no more than it declared, and nothing is no stream") {
  test::TempDir tmp;
  const std::string tar = tmp.path + "/in.tar";
  std::istringstream nothing("");
  CHECK_THROWS_WITH(read_checkpoint_stream(nothing, tar), Catch::Matchers::Contains("nothing came on stdin"));
  std::istringstream no_size("garbage\n" + std::string(100, 'x'));
  CHECK_THROWS_WITH(read_checkpoint_stream(no_size, tar),
                    Catch::Matchers::Contains("does not begin with its size (\"ddpctl-checkpoint BYTES\")"));
  std::istringstream too_much("ddpctl-checkpoint 10\n" + std::string((64 << 20) + 100, 'x'));
  CHECK_THROWS_WITH(read_checkpoint_stream(too_much, tar), Catch::Matchers::Contains("larger than the 10 B it declared"));
  std::istringstream huge("ddpctl-checkpoint 999999999999999\n");
  CHECK_THROWS_WITH(read_checkpoint_stream(huge, tar), Catch::Matchers::Contains("this disk has"));
  const std::string body = test::tar_member("./step", '0', "1\n") + test::tar_end();
  std::istringstream good("ddpctl-checkpoint " + std::to_string(body.size()) + "\n" + body);
  read_checkpoint_stream(good, tar);
  CHECK(read_file(tar) == body);
}

TEST_CASE("the size a checkpoint folder declares is at least the tar GNU tar makes of it") {
  test::TempDir tmp;
  const std::string ck = tmp.path + "/ck";
  fs::create_directories(ck + "/" + std::string(120, 'n'));
  write_file_atomic(ck + "/step-41.pt", std::string(5000, 'w'));
  write_file_atomic(ck + "/" + std::string(120, 'n') + "/model.pt", std::string(70000, 'm'));
  fs::create_symlink("step-41.pt", ck + "/latest");
  fs::create_symlink(std::string(130, 't'), ck + "/long-link");
  SystemCommandRunner local;
  CommandResult r = local.run({"sh", "-c", "tar -cf - -C \"$1\" . | wc -c", "sh", ck}, std::chrono::seconds(30));
  REQUIRE(r.ok());
  const long long made = std::stoll(trim(r.out));
  CHECK(checkpoint_tar_bound(ck) >= made);
  CHECK(checkpoint_tar_bound(ck) < made + 40000);
  CHECK(checkpoint_tar_bound(tmp.path + "/absent") == 10240);
}

TEST_CASE("a run's checkpoint folder is the one its script gives its jobs") {
  test::TempDir tmp;
  CHECK(run_checkpoint_folder(checkpoint_run(tmp.path + "/r1", "export DDPCTL_CHECKPOINT_DIR=/scratch/ck")) ==
        "/scratch/ck");
  CHECK(run_checkpoint_folder(checkpoint_run(tmp.path + "/r2", "export DDPCTL_CHECKPOINT_DIR='ck/lr 0.1'\\''s'")) ==
        tmp.path + "/r2/submit/ck/lr 0.1's");
  CHECK(run_checkpoint_folder(checkpoint_run(tmp.path + "/r3", "echo none")).empty());
  CHECK(checkpoint_send_argv(tmp.path + "/absent") == std::vector<std::string>{"tar", "-cf", "-", "-T", "/dev/null"});
}

TEST_CASE("a checkpoint that comes is taken whole, or refused whole when it names anything but its own files") {
  test::TempDir tmp;
  Run run = checkpoint_run(tmp.path + "/run", "export DDPCTL_CHECKPOINT_DIR=" + tmp.path + "/ck");
  fs::create_directories(tmp.path + "/ck");
  write_file_atomic(tmp.path + "/ck/old.pt", "old");
  const std::string tar = tmp.path + "/in.tar";
  SECTION("files and folders: in place of the folder, the old one kept beside it") {
    write_file_atomic(tar, test::tar_member("./", '5') + test::tar_member("./sub", '5') +
                               test::tar_member("./sub/model.pt", '0', "weights") +
                               test::tar_member("./step", '0', "1200\n") + test::tar_end());
    nlohmann::json said = receive_checkpoint(run, tar);
    CHECK(said["files"] == 2);
    CHECK(said["bytes"] == 12);
    CHECK(read_file(tmp.path + "/ck/sub/model.pt") == "weights");
    CHECK(read_file(tmp.path + "/ck/step") == "1200\n");
    CHECK_FALSE(fs::exists(tmp.path + "/ck/old.pt"));
    REQUIRE(said.contains("kept"));
    CHECK(read_file(said["kept"].get<std::string>() + "/old.pt") == "old");
  }
  SECTION("a name out of the folder: refused, and nothing replaced") {
    write_file_atomic(tar, test::tar_member("./step", '0', "1\n") + test::tar_member("../../etc/x", '0', "x") +
                               test::tar_end());
    CHECK_THROWS_WITH(receive_checkpoint(run, tar), Catch::Matchers::Contains("'../../etc/x'"));
    CHECK(read_file(tmp.path + "/ck/old.pt") == "old");
  }
  SECTION("a link out of the folder: refused") {
    write_file_atomic(tar, test::tar_member("./latest", '2', "", 0777, "/etc/passwd") + test::tar_end());
    CHECK_THROWS_WITH(receive_checkpoint(run, tar), Catch::Matchers::Contains("a symbolic link to an absolute path"));
    CHECK(read_file(tmp.path + "/ck/old.pt") == "old");
  }
  SECTION("a link inside the folder (latest -> step-41.pt): taken as a link") {
    write_file_atomic(tar, test::tar_member("./", '5') + test::tar_member("./step-41.pt", '0', "w41") +
                               test::tar_member("./latest", '2', "", 0777, "step-41.pt") + test::tar_end());
    nlohmann::json said = receive_checkpoint(run, tar);
    CHECK(said["files"] == 1);
    CHECK(fs::read_symlink(tmp.path + "/ck/latest") == "step-41.pt");
    CHECK(read_file(tmp.path + "/ck/latest") == "w41");
  }
  SECTION("a name under a link of the archive: refused, nothing written through it") {
    write_file_atomic(tar, test::tar_member("./sub", '2', "", 0777, "other") + test::tar_member("./sub/x", '0', "x") +
                               test::tar_end());
    CHECK_THROWS_WITH(receive_checkpoint(run, tar), Catch::Matchers::Contains("a name under the link 'sub'"));
    CHECK(read_file(tmp.path + "/ck/old.pt") == "old");
  }
  SECTION("names with escapes or not UTF-8: refused, shown escaped, nothing left behind") {
    write_file_atomic(tar, test::tar_member("./a\x1b[2J", '0', "x") + test::tar_end());
    CHECK_THROWS_WITH(receive_checkpoint(run, tar), Catch::Matchers::Contains("'a\\u{001b}[2J'"));
    write_file_atomic(tar, test::tar_member("./b\xff", '0', "x") + test::tar_end());
    CHECK_THROWS_WITH(receive_checkpoint(run, tar), Catch::Matchers::Contains("not UTF-8"));
    // A file and a folder of one name: refused as it is unpacked, its folder removed.
    write_file_atomic(tar, test::tar_member("./d", '0', "x") + test::tar_member("./d/e", '0', "y") + test::tar_end());
    CHECK_THROWS(receive_checkpoint(run, tar));
    for (const auto& e : fs::directory_iterator(tmp.path))
      CHECK(e.path().filename().string().find("incoming") == std::string::npos);
    CHECK(read_file(tmp.path + "/ck/old.pt") == "old");
  }
  SECTION("cut short: refused") {
    std::string whole = test::tar_member("./step", '0', std::string(2000, 'x')) + test::tar_end();
    write_file_atomic(tar, whole.substr(0, 1200));
    CHECK_THROWS_WITH(receive_checkpoint(run, tar), Catch::Matchers::Contains("not a whole tar archive"));
    CHECK(read_file(tmp.path + "/ck/old.pt") == "old");
  }
}
