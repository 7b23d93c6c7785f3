// The site options of a run spec (spec_site.cpp): read with file:line
// errors, rendered as #SBATCH lines, the `sbatch:` escape hatch checked
// against ddpctl's own options and the cluster's sbatch, and the user's
// comment kept behind ddpctl's token.
#include "catch.hpp"
#include <filesystem>

#include "spec/cluster.hpp"
#include "fake_runner.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "script/preflight.hpp"
#include "script/resolve.hpp"
#include "script/runs.hpp"
#include "spec/spec.hpp"
#include "slurm/sbatch_options.hpp"
#include "spec/spec_site.hpp"

using namespace ddpctl;
using ddpctl::test::user_error_of;

namespace {

const char* kBase =
    "name: r\n"
    "cluster: local\n"
    "partition: cpu\n"
    "gpus_per_node: 0\n"
    "procs_per_node: 1\n"
    "time: '00:10:00'\n"
    "command: 'true'\n";

ResolvedRun resolve(const std::string& yaml) {
  return resolve_run(parse_run_spec("a.yaml", kBase + yaml),
                     load_cluster_profile(ddpctl::test::source_dir() + "/configs/clusters/local.yaml"));
}

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

}  // namespace

TEST_CASE("site options become #SBATCH lines after ddpctl's own, per shape where they say where it runs") {
  ResolvedRun run = resolve(
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
    CHECK(has(d, line));
  CHECK_FALSE(has(d, "--spread-job"));  // false: not given
  // After everything ddpctl computes: the output lines come last as before.
  CHECK(std::find(d.begin(), d.end(), "--hold") < std::find(d.begin(), d.end(), "--output=logs/%x_%j.out"));
  const auto& other = run.shapes[1].directives;
  CHECK(has(other, "--reservation=other-window"));
  CHECK(has(other, "--exclude=g4"));
  CHECK(has(other, "--nodelist=g[2-3]"));  // the base shape's, not overridden
  CHECK(run.spec.site.comment == "lr sweep");
  // The comment is not a directive: ddpctl's token goes first, on sbatch's command line.
  for (const auto& line : d) CHECK(line.rfind("--comment", 0) != 0);
}

TEST_CASE("site options are checked where they are written, every problem at once") {
  std::string err = user_error_of([] {
    parse_run_spec("a.yaml", std::string(kBase) +
                                 "dependency: afterok:12,afterany\n"  // 8
                                 "mail_type: [END, FIAL]\n"           // 9
                                 "hint: fast\n"                       // 10
                                 "exclude: 'g1 g2'\n"                 // 11
                                 "sbatch:\n"                          // 12
                                 "  nodes: 2\n"                       // 13
                                 "  partition: gpu\n"                 // 14
                                 "  x: 1\n"                           // 15
                                 "  gpu-bind: 'map_gpu:0 1'\n");      // 16
  });
  CHECK_THAT(err, Catch::Contains("a.yaml:8:13: dependency: 'afterok:12,afterany' afterany needs job ids"));
  CHECK_THAT(err, Catch::Contains("a.yaml:9:18: mail_type[1]: 'FIAL' must be one of NONE"));
  CHECK_THAT(err, Catch::Contains("(did you mean 'FAIL'?)"));
  CHECK_THAT(err, Catch::Contains("a.yaml:10:7: hint: 'fast' must be one of compute_bound"));
  CHECK_THAT(err, Catch::Contains("a.yaml:11:10: exclude: 'g1 g2' must be a Slurm host list"));
  CHECK_THAT(err, Catch::Contains("a.yaml:13:10: sbatch.nodes: --nodes cannot be set through sbatch: because ddpctl "
                                  "computes it from the shape"));
  CHECK_THAT(err, Catch::Contains("a.yaml:14:14: sbatch.partition: --partition cannot be set through sbatch: because "
                                  "the spec has a field for it: partition:"));
  CHECK_THAT(err, Catch::Contains("sbatch.x: must be sbatch's long option name"));
  CHECK_THAT(err, Catch::Contains("sbatch.gpu-bind: 'map_gpu:0 1' must not contain spaces or quotes"));
  CHECK_THAT(user_error_of([] { parse_run_spec("a.yaml", std::string(kBase) + "mail_type: END\n"); }),
             Catch::Contains("a.yaml:8:12: mail_type: mail_type is set but mail_user is not"));
}

TEST_CASE("a dependency is one kind of join, of known types with job ids") {
  CHECK(parse_run_spec("a.yaml", std::string(kBase) + "dependency: singleton\n").site.dependency == "singleton");
  CHECK(parse_run_spec("a.yaml", std::string(kBase) + "dependency: afterok:1?afternotok:2_3\n").site.dependency ==
        "afterok:1?afternotok:2_3");
  CHECK_THAT(user_error_of([] { parse_run_spec("a.yaml", std::string(kBase) + "dependency: afterok:1,after:2?after:3\n"); }),
             Catch::Contains("both ','"));
  CHECK_THAT(user_error_of([] { parse_run_spec("a.yaml", std::string(kBase) + "dependency: aftrok:1\n"); }),
             Catch::Contains("(did you mean 'afterok'?)"));
}

TEST_CASE("site options are set with --set as any other field") {
  RunSpec s = parse_run_spec("a.yaml", kBase, {"reservation=maint", "sbatch.gpu-bind=closest", "hold=true"});
  CHECK(s.shapes[0].reservation == "maint");
  CHECK(s.site.hold);
  REQUIRE(s.site.sbatch.size() == 1);
  CHECK(s.site.sbatch[0] == std::make_pair(std::string("gpu-bind"), std::string("closest")));
}

TEST_CASE("the options an sbatch has are read off its --help") {
  auto known = sbatch_long_options(
      "Usage: sbatch [OPTIONS(0)...] [ : [OPTIONS(N)...]] script(0) [args(0)...]\n"
      "      -A, --account=name          charge job to specified account\n"
      "          --gpu-bind=...          task to gpu binding options\n"
      "  -H, --hold                      submit job in held state\n"
      "      --x11[=<all|first|last>]    forward X11\n");
  CHECK(known.count("account"));
  CHECK(known.count("gpu-bind"));
  CHECK(known.count("hold"));
  CHECK(known.count("x11"));
  CHECK_FALSE(known.count("A"));
}

TEST_CASE("preflight refuses an sbatch: option this cluster's sbatch lacks, naming the line") {
  test::FakeSlurm s("24.11");
  s.runner.on("sbatch", {"--help"},
              test::exits(0, "      --gpu-bind=...   task to gpu binding\n      --overcommit     overcommit\n"));
  // Options --help leaves out are put to sbatch's own parser.
  s.runner.on("sbatch", {"--gpu-bnd=closest", "--help"},
              test::exits(255, "", "sbatch: unrecognized option '--gpu-bnd=closest'\nTry \"sbatch --help\"\n"));
  s.runner.on("sbatch", {"--spread-job", "--help"}, test::exits(0, "Usage: sbatch ...\n"));
  ResolvedRun run = resolve("sbatch:\n  gpu-bnd: closest\n  overcommit: true\n  spread-job: true\n");
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

TEST_CASE("a job's comment carries ddpctl's token first, and the token is found with or without the user's words") {
  CHECK(job_comment("abc123") == "ddpctl:abc123");
  CHECK(job_comment("abc123", "lr sweep") == "ddpctl:abc123 lr sweep");
  CHECK(comment_has_token("ddpctl:abc123", "abc123"));
  CHECK(comment_has_token("ddpctl:abc123 lr sweep", "abc123"));
  CHECK_FALSE(comment_has_token("ddpctl:abc1234", "abc123"));
  CHECK_FALSE(comment_has_token("ddpctl:abc12", "abc123"));
  CHECK_FALSE(comment_has_token("lr sweep ddpctl:abc123", "abc123"));
}

TEST_CASE("an sbatch: name is resolved as sbatch reads it: a prefix of a long option is that option") {
  auto err_for = [](const std::string& entries) {
    return user_error_of([&] { parse_run_spec("a.yaml", std::string(kBase) + "sbatch: {" + entries + "}\n"); });
  };
  // Each of these passed before, and sbatch 22.05 read it as the option in the message.
  struct Case {
    const char* entry;
    const char* expect;
  } cases[] = {
      {"job: x", "sbatch.job: job is --job-name to sbatch 22.05 (it takes the beginning of an option's name as the "
                 "option): --job-name cannot be set through sbatch: because ddpctl computes it"},
      {"part: gpu", "sbatch.part: part is --partition to sbatch 22.05"},
      {"ntasks-per-n: 4", "sbatch.ntasks-per-n: ntasks-per-n is --ntasks-per-node to sbatch 22.05"},
      {"sig: USR1@60", "sbatch.sig: sig is --signal to sbatch 22.05"},
      {"arr: 1-4", "sbatch.arr: arr is --array to sbatch 22.05"},
      {"outp: /tmp/x", "sbatch.outp: outp is --output to sbatch 22.05"},
      {"parsa: true", "sbatch.parsa: parsa is --parsable to sbatch 22.05"},
      {"tasks-per-node: 4", "sbatch.tasks-per-node: tasks-per-node is sbatch's other name for --ntasks-per-node"},
      {"help: true", "--help cannot be set through sbatch: because sbatch prints it and exits 0 without submitting a job"},
      {"usage: true", "--usage cannot be set through sbatch: because sbatch prints it and exits 0"},
      {"vers: true", "vers is --version to sbatch 22.05"},
      {"wait: true", "--wait cannot be set through sbatch: because sbatch would not return until the job ends"},
      {"export: NONE", "--export cannot be set through sbatch: because it sets the ranks' environment: NONE"},
      {"export: 'ALL,LD_PRELOAD=/x/evil.so'", "--export cannot be set through sbatch"},
      {"export-file: /x", "--export-file cannot be set through sbatch"},
      {"nodefile: /x/nodes", "--nodefile cannot be set through sbatch: because it names nodes beside nodelist:"},
      {"mem-per-cpu: 4G", "--mem-per-cpu cannot be set through sbatch: because it restates the memory"},
      {"tres-per-task: 'gres/gpu:2'", "--tres-per-task cannot be set through sbatch: because ddpctl computes it from "
                                      "the shape"},
      {"ntasks-per-gpu: 2", "--ntasks-per-gpu cannot be set through sbatch"},
      {"clusters: other", "--clusters cannot be set through sbatch: because status, logs and cancel ask this "
                          "cluster's Slurm"},
      {"par: x", "sbatch.par: par is ambiguous: sbatch 22.05 reads it as any of --parsable, --partition and refuses "
                 "the script; write the option's full name"},
  };
  for (const auto& c : cases) {
    INFO(c.entry);
    CHECK_THAT(err_for(c.entry), Catch::Contains(c.expect));
  }
  // A prefix of an option sbatch: may set goes into the script by its full name.
  RunSpec s = parse_run_spec("a.yaml", std::string(kBase) + "sbatch: {gpu-b: closest, overc: true}\n");
  REQUIRE(s.site.sbatch.size() == 2);
  CHECK(s.site.sbatch[0] == std::make_pair(std::string("gpu-bind"), std::string("closest")));
  CHECK(s.site.sbatch[1] == std::make_pair(std::string("overcommit"), std::string("")));
  CHECK(s.site.where.at("sbatch.gpu-bind").line == 8);
  // A name no version knows is left to preflight, which asks the cluster's sbatch.
  s = parse_run_spec("a.yaml", std::string(kBase) + "sbatch: {site-plugin-option: x}\n");
  CHECK(s.site.sbatch[0].first == "site-plugin-option");
}

TEST_CASE("sbatch's names resolve as getopt_long resolves them, in each version") {
  const auto& sets = sbatch_option_sets();
  REQUIRE(sets.size() == 3);
  const auto& v22 = sets[0].names;
  CHECK(resolve_sbatch_name("time", v22).kind == SbatchNameKind::Exact);  // exact beats time-min
  CHECK(resolve_sbatch_name("tim", v22).kind == SbatchNameKind::Ambiguous);
  SbatchName n = resolve_sbatch_name("j", v22);
  CHECK(n.kind == SbatchNameKind::Prefix);
  CHECK(n.option == "job-name");
  CHECK(resolve_sbatch_name("zzz", v22).kind == SbatchNameKind::Unknown);
  // tres-per-task came with 24.11: 22.05 does not know it, 26.05 does.
  CHECK(resolve_sbatch_name("tres-per-t", v22).kind == SbatchNameKind::Unknown);
  CHECK(resolve_sbatch_name("tres-per-t", sets[2].names).option == "tres-per-task");
  // 24.11's --extra is exact there and the beginning of --extra-node-info on 22.05.
  CHECK(resolve_sbatch_name("extra", sets[1].names).kind == SbatchNameKind::Exact);
  CHECK(resolve_sbatch_name("extra", v22).option == "extra-node-info");
  CHECK(sbatch_canonical_option("tasks-per-node") == "ntasks-per-node");
}

TEST_CASE("an invalid mail_user gets its own error, not 'mail_user is not set'") {
  std::string err = user_error_of([] {
    parse_run_spec("a.yaml", std::string(kBase) + "mail_type: END\nmail_user: 'a b@x'\n");
  });
  CHECK_THAT(err, Catch::Contains("a.yaml:9:12: mail_user: 'a b@x' must be a mail address"));
  CHECK_THAT(err, !Catch::Contains("mail_user is not"));
}
