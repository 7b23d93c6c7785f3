// The site options of a run spec (spec_site.cpp): read with file:line
// errors, the `sbatch:` escape hatch checked against ddpctl's own options
// and each version's sbatch. Resolved into #SBATCH lines and checked against
// the cluster before the queue: tests/unit/script/test_site_options.cpp.
#include "catch.hpp"

#include "helpers.hpp"
#include "spec/spec.hpp"
#include "slurm/sbatch_options.hpp"
#include "spec/spec_site.hpp"

using namespace ddpctl;
using ddpctl::test::user_error_of;

namespace {

const char* kSpecSiteBase =
    "name: r\n"
    "cluster: local\n"
    "partition: cpu\n"
    "gpus_per_node: 0\n"
    "procs_per_node: 1\n"
    "time: '00:10:00'\n"
    "command: 'true'\n";

}  // namespace

TEST_CASE("site options are checked where they are written, every problem at once") {
  std::string err = user_error_of([] {
    parse_run_spec("a.yaml", std::string(kSpecSiteBase) +
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
  CHECK_THAT(user_error_of([] { parse_run_spec("a.yaml", std::string(kSpecSiteBase) + "mail_type: END\n"); }),
             Catch::Contains("a.yaml:8:12: mail_type: mail_type is set but mail_user is not"));
}

TEST_CASE("a dependency is one kind of join, of known types with job ids") {
  CHECK(parse_run_spec("a.yaml", std::string(kSpecSiteBase) + "dependency: singleton\n").site.dependency == "singleton");
  CHECK(parse_run_spec("a.yaml", std::string(kSpecSiteBase) + "dependency: afterok:1?afternotok:2_3\n").site.dependency ==
        "afterok:1?afternotok:2_3");
  CHECK_THAT(user_error_of([] { parse_run_spec("a.yaml", std::string(kSpecSiteBase) + "dependency: afterok:1,after:2?after:3\n"); }),
             Catch::Contains("both ','"));
  CHECK_THAT(user_error_of([] { parse_run_spec("a.yaml", std::string(kSpecSiteBase) + "dependency: aftrok:1\n"); }),
             Catch::Contains("(did you mean 'afterok'?)"));
}

TEST_CASE("site options are set with --set as any other field") {
  RunSpec s = parse_run_spec("a.yaml", kSpecSiteBase, {"reservation=maint", "sbatch.gpu-bind=closest", "hold=true"});
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

TEST_CASE("an sbatch: name is resolved as sbatch reads it: a prefix of a long option is that option") {
  auto err_for = [](const std::string& entries) {
    return user_error_of([&] { parse_run_spec("a.yaml", std::string(kSpecSiteBase) + "sbatch: {" + entries + "}\n"); });
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
  RunSpec s = parse_run_spec("a.yaml", std::string(kSpecSiteBase) + "sbatch: {gpu-b: closest, overc: true}\n");
  REQUIRE(s.site.sbatch.size() == 2);
  CHECK(s.site.sbatch[0] == std::make_pair(std::string("gpu-bind"), std::string("closest")));
  CHECK(s.site.sbatch[1] == std::make_pair(std::string("overcommit"), std::string("")));
  CHECK(s.site.where.at("sbatch.gpu-bind").line == 8);
  // A name no version knows is left to preflight, which asks the cluster's sbatch.
  s = parse_run_spec("a.yaml", std::string(kSpecSiteBase) + "sbatch: {site-plugin-option: x}\n");
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
    parse_run_spec("a.yaml", std::string(kSpecSiteBase) + "mail_type: END\nmail_user: 'a b@x'\n");
  });
  CHECK_THAT(err, Catch::Contains("a.yaml:9:12: mail_user: 'a b@x' must be a mail address"));
  CHECK_THAT(err, !Catch::Contains("mail_user is not"));
}
