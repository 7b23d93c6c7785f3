// The site options of a run spec (spec_site.hpp) on their way to sbatch:
// resolved into #SBATCH lines per shape, and checked before the queue
// against the cluster's sbatch and what ddp-train would refuse at start
// (preflight.hpp). Reading them: tests/unit/spec/test_spec_site.cpp.
#include "catch.hpp"
#include <algorithm>
#include <filesystem>

#include "base/files.hpp"
#include "fake_runner.hpp"
#include "helpers.hpp"
#include "script/preflight.hpp"
#include "script/resolve.hpp"
#include "spec/cluster.hpp"
#include "spec/spec.hpp"

using namespace ddpctl;
using ddpctl::test::user_error_of;

namespace {

const char* kSiteBase =
    "name: r\n"
    "cluster: local\n"
    "partition: cpu\n"
    "gpus_per_node: 0\n"
    "procs_per_node: 1\n"
    "time: '00:10:00'\n"
    "command: 'true'\n";

ResolvedRun resolve_site(const std::string& yaml) {
  return resolve_run(parse_run_spec("a.yaml", kSiteBase + yaml),
                     load_cluster_profile(ddpctl::test::source_dir() + "/configs/clusters/local.yaml"));
}

bool has_option(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

}  // namespace

TEST_CASE("site options become #SBATCH lines after ddpctl's own, per shape where they say where it runs") {
  ResolvedRun run = resolve_site(
      "reservation: maint-window\n"
      "exclude: g1\n"
      "nodelist: g[2-3]\n"
      "dependency: afterok:12:13\n"
      "begin: now+1hour\n"
      "hold: true\n"
      "mail_type: [END, FAIL]\n"
      "mail_user: me@example.org\n"
      "hint: nomultithread\n"
      "comment: lr sweep\n"
      "sbatch:\n"
      "  gpu-bind: closest\n"
      "  --requeue-exit: 3\n"
      "  overcommit: true\n"
      "  spread-job: false\n"
      "  kill-on-invalid-dep: yes\n"
      "alternatives:\n"
      "  - {label: other, reservation: other-window, exclude: g4}\n");
  REQUIRE(run.shapes.size() == 2);
  const auto& d = run.shapes[0].directives;
  for (const char* line : {"--reservation=maint-window", "--exclude=g1", "--nodelist=g[2-3]", "--dependency=afterok:12:13",
                           "--begin=now+1hour", "--hold", "--mail-type=END,FAIL", "--mail-user=me@example.org",
                           "--hint=nomultithread", "--gpu-bind=closest", "--requeue-exit=3", "--overcommit",
                           "--kill-on-invalid-dep=yes"})
    CHECK(has_option(d, line));
  CHECK_FALSE(has_option(d, "--spread-job"));  // false: not given
  // After everything ddpctl computes: the output lines come last as before.
  CHECK(std::find(d.begin(), d.end(), "--hold") < std::find(d.begin(), d.end(), "--output=logs/%x_%j.out"));
  const auto& other = run.shapes[1].directives;
  CHECK(has_option(other, "--reservation=other-window"));
  CHECK(has_option(other, "--exclude=g4"));
  CHECK(has_option(other, "--nodelist=g[2-3]"));  // the base shape's, not overridden
  CHECK(run.spec.site.comment == "lr sweep");
  // The comment is not a directive: ddpctl's token goes first, on sbatch's command line.
  for (const auto& line : d) CHECK(line.rfind("--comment", 0) != 0);
}

TEST_CASE("preflight refuses an sbatch: option this cluster's sbatch lacks, naming the line") {
  test::FakeSlurm s("24.11");
  s.runner.on("sbatch", {"--help"},
              test::exits(0, "      --gpu-bind=...   task to gpu binding\n      --overcommit     overcommit\n"));
  // Options --help leaves out are put to sbatch's own parser.
  s.runner.on("sbatch", {"--gpu-bnd=closest", "--help"},
              test::exits(255, "", "sbatch: unrecognized option '--gpu-bnd=closest'\nTry \"sbatch --help\"\n"));
  s.runner.on("sbatch", {"--spread-job", "--help"}, test::exits(0, "Usage: sbatch ...\n"));
  ResolvedRun run = resolve_site("sbatch:\n  gpu-bnd: closest\n  overcommit: true\n  spread-job: true\n");
  Diagnostics diags;
  check_sbatch_options(run, s.slurm, diags);
  REQUIRE(diags.items().size() == 1);
  CHECK(diags.items()[0].where.line == 9);
  CHECK_THAT(diags.items()[0].message, Catch::Contains("has no option --gpu-bnd (did you mean 'gpu-bind'?)"));
  CHECK(s.runner.count("sbatch", {"--overcommit", "--help"}) == 0);  // listed: not tried
  SECTION("and says so when it cannot ask") {
    s.runner.on("sbatch", {"--help"}, [](const std::vector<std::string>&) { return test::not_found(); });
    Diagnostics none;
    check_sbatch_options(run, s.slurm, none);
    REQUIRE(none.items().size() == 1);
    CHECK_THAT(none.items()[0].message, Catch::Contains("cannot ask this cluster's sbatch"));
  }
}

TEST_CASE("what ddp-train would refuse at start is refused before the queue") {
  CHECK_THAT(user_error_of([] {
               parse_run_spec("a.yaml", "name: r\ncluster: local\ngpus_per_node: 0\nprocs_per_node: 1\n"
                                        "trainer:\n  data: synthetic\n  resume: true\n");
             }),
             Catch::Contains("a.yaml:7:11: trainer.resume: resume: true needs checkpoint_dir"));
  test::TempDir dir;
  std::string cwd = std::filesystem::current_path().string();
  std::filesystem::current_path(dir.path);
  auto run = resolve_run(parse_run_spec("a.yaml", "name: r\ncluster: local\ngpus_per_node: 0\nprocs_per_node: 1\n"
                                                  "time: '00:10:00'\ntrainer:\n  data: tiny\n"),
                         load_cluster_profile(ddpctl::test::source_dir() + "/configs/clusters/local.yaml"));
  Diagnostics missing;
  check_trainer_data(run, missing);
  REQUIRE(missing.items().size() == 1);
  CHECK(missing.items()[0].where.line == 7);
  CHECK_THAT(missing.items()[0].message, Catch::Contains("tiny does not exist"));
  std::filesystem::create_directory(dir.path + "/tiny");
  Diagnostics found;
  check_trainer_data(run, found);
  CHECK(found.items().empty());
  std::filesystem::current_path(cwd);
}
