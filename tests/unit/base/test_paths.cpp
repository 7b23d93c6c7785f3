// Where ddpctl finds what it ships and what it runs (paths.cpp): the trainer
// a spec names none of, site-wide profiles, programs on PATH.
#include "catch.hpp"
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <filesystem>

#include "base/files.hpp"
#include "helpers.hpp"
#include "base/paths.hpp"

using namespace ddpctl;

namespace {

// Sets (or unsets, for nullptr) an environment variable for one scope.
struct EnvVar {
  std::string name;
  std::optional<std::string> old;
  EnvVar(std::string n, const char* value) : name(std::move(n)) {
    if (const char* v = std::getenv(name.c_str())) old = v;
    if (value)
      setenv(name.c_str(), value, 1);
    else
      unsetenv(name.c_str());
  }
  ~EnvVar() {
    if (old)
      setenv(name.c_str(), old->c_str(), 1);
    else
      unsetenv(name.c_str());
  }
};

}  // namespace

TEST_CASE("the default trainer: $DDPCTL_TRAINER, else ddp-train on PATH by name, else the one beside ddpctl") {
  test::TempDir tmp;
  SECTION("$DDPCTL_TRAINER wins") {
    EnvVar t("DDPCTL_TRAINER", "/apps/ddpctl/1.0/bin/ddp-train");
    CHECK(default_trainer_program() == "/apps/ddpctl/1.0/bin/ddp-train");
  }
  SECTION("on PATH: by name, as the job inherits this PATH") {
    EnvVar t("DDPCTL_TRAINER", nullptr);
    write_file_atomic(tmp.path + "/ddp-train", "#!/bin/sh\n", 0755);
    EnvVar path("PATH", (tmp.path + ":/usr/bin:/bin").c_str());
    CHECK(default_trainer_program() == "ddp-train");
    CHECK(find_program("ddp-train") == tmp.path + "/ddp-train");
  }
  SECTION("not on PATH: beside this binary (here the build tree's trainer/ddp-train), by absolute path") {
    EnvVar t("DDPCTL_TRAINER", nullptr);
    // A PATH of an empty folder, not /usr/bin: the suite's package test
    // installs /usr/bin/ddp-train while other tests run.
    std::filesystem::create_directory(tmp.path + "/empty");
    EnvVar path("PATH", (tmp.path + "/empty").c_str());
    std::string built = std::filesystem::path(executable_dir()).parent_path().string() + "/trainer/ddp-train";
    if (std::filesystem::exists(built))
      CHECK(default_trainer_program() == built);
    else
      CHECK(default_trainer_program() == "ddp-train");  // the preflight reports it
  }
}

TEST_CASE("site-wide profiles are searched after the user's and before the bundled ones") {
  EnvVar clusters("DDPCTL_CLUSTERS", "/tmp/mine");
  auto dirs = cluster_search_path();
  REQUIRE(dirs.size() >= 4);
  CHECK(dirs.front() == "/tmp/mine");
  auto site = std::find(dirs.begin(), dirs.end(), "/etc/ddpctl/clusters");
  REQUIRE(site != dirs.end());
  CHECK(site > dirs.begin() + 1);  // after $DDPCTL_CLUSTERS and ~/.config
  CHECK(dirs.back() == data_dir() + "/configs/clusters");
}

TEST_CASE("an absolute path has no trailing slash: a run folder's last name is its id") {
  CHECK(absolute_path("/runs/x/") == "/runs/x");
  CHECK(absolute_path("/runs/x//") == "/runs/x");
  CHECK(absolute_path("/runs/./x/.") == "/runs/x");
  CHECK(absolute_path("/") == "/");
  CHECK(std::filesystem::path(absolute_path("x/")).filename() == "x");
}
