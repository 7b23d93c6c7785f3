// Sites in a run spec (spec_sites.cpp, docs/race.md "Across sites"): `on:`
// at the top level and per alternative, a site's own keys merged into its
// view with their lines, and every site's view checked before anything is
// sent.
#include "catch.hpp"

#include <fmt/format.h>

#include "helpers.hpp"
#include "spec/spec.hpp"
#include "spec/spec_sites.hpp"

using namespace ddpctl;
using ddpctl::test::user_error_of;

namespace {

const char* kTwoSites =
    "name: r\n"                               // 1
    "cluster: ibex\n"                         // 2
    "on: alice@ibex.kaust.edu.sa\n"           // 3
    "partition: gpu\n"                        // 4
    "gpus_per_node: 4\n"                      // 5
    "time: '01:00:00'\n"                      // 6
    "trainer: {model: resnet50, data: /ibex/data, epochs: 3}\n"  // 7
    "env: {A: one}\n"                         // 8
    "alternatives:\n"                         // 9
    "  - nodes: 2\n"                          // 10
    "  - on: alice@login.delta.ncsa.edu\n"    // 11
    "    cluster: delta\n"                    // 12
    "    remote_dir: proj/resnet\n"           // 13
    "    partition: gpuA100x4\n"              // 14
    "    account: bbka-delta-gpu\n"           // 15
    "    trainer: {data: /delta/data}\n"      // 16
    "    label: delta-1x4\n"                  // 17
    "  - on: alice@login.delta.ncsa.edu\n"    // 18
    "    nodes: 2\n"                          // 19
    "    label: delta-2x4\n";                 // 20

}  // namespace

TEST_CASE("a spec names its sites: every shape has its login host, inherited from the top level") {
  RunSpec spec = parse_run_spec("r.yaml", kTwoSites);
  REQUIRE(spec.names_sites);
  REQUIRE(spec.shapes.size() == 4);
  CHECK(spec.shapes[0].host == "alice@ibex.kaust.edu.sa");
  CHECK(spec.shapes[1].host == "alice@ibex.kaust.edu.sa");
  CHECK(spec.shapes[2].host == "alice@login.delta.ncsa.edu");
  CHECK(spec.shapes[2].remote_dir == "proj/resnet");
  CHECK(spec.shapes[3].host == "alice@login.delta.ncsa.edu");
  CHECK(spec_hosts(spec) == std::vector<std::string>{"alice@ibex.kaust.edu.sa", "alice@login.delta.ncsa.edu"});
}

TEST_CASE("read at one site, a spec has that site's shapes and its own keys, the rest inherited") {
  RunSpec delta = parse_run_spec("r.yaml", kTwoSites, {}, "alice@login.delta.ncsa.edu");
  CHECK(delta.at_site == "alice@login.delta.ncsa.edu");
  REQUIRE(delta.shapes.size() == 2);
  CHECK(delta.shapes[0].label == "delta-1x4");
  CHECK(delta.shapes[0].partition == "gpuA100x4");
  CHECK(delta.shapes[0].account == "bbka-delta-gpu");
  CHECK(delta.shapes[1].label == "delta-2x4");
  CHECK(delta.shapes[1].partition == "gpu");  // a shape key is the alternative's own, not the site's
  CHECK(delta.cluster == "delta");           // the site's: every shape there
  CHECK(delta.trainer_data == "/delta/data");
  // The rest of trainer: is inherited key by key.
  CHECK(std::find(delta.trainer_args.begin(), delta.trainer_args.end(), "--epochs=3") != delta.trainer_args.end());
  REQUIRE(delta.env.size() == 1);

  RunSpec ibex = parse_run_spec("r.yaml", kTwoSites, {}, "alice@ibex.kaust.edu.sa");
  REQUIRE(ibex.shapes.size() == 2);
  CHECK(ibex.cluster == "ibex");
  CHECK(ibex.trainer_data == "/ibex/data");
}

TEST_CASE("a site's mistake is named at its line before anything is sent") {
  std::string err = user_error_of([] {
    std::string spec = kTwoSites;
    spec.replace(spec.find("{data: /delta/data}"), 19, "{epochs: many}");
    parse_run_spec("r.yaml", spec);
  });
  CHECK_THAT(err, Catch::Matchers::Contains("r.yaml:16"));
  CHECK_THAT(err, Catch::Matchers::Contains("epochs"));
}

TEST_CASE("two shapes of one site that set its keys differently are refused, naming both") {
  std::string err = user_error_of([] {
    parse_run_spec("r.yaml", std::string(kTwoSites) + "    cluster: delta-other\n");
  });
  CHECK_THAT(err, Catch::Matchers::Contains("r.yaml:21"));
  CHECK_THAT(err, Catch::Matchers::Contains("alternatives[2].cluster"));
  CHECK_THAT(err, Catch::Matchers::Contains("differs from alternatives[1].cluster"));
}

TEST_CASE("a site's own key needs the alternative's `on:`") {
  std::string err = user_error_of([] {
    parse_run_spec("r.yaml", "name: r\ncluster: a\ngpus_per_node: 1\ncommand: 'true'\n"
                             "alternatives:\n  - nodes: 2\n    cluster: b\n");
  });
  CHECK_THAT(err, Catch::Matchers::Contains("r.yaml:7"));
  CHECK_THAT(err, Catch::Matchers::Contains("alternatives[0].cluster"));
  CHECK_THAT(err, Catch::Matchers::Contains("it needs `on:`"));
}

TEST_CASE("`on:` is a host to ssh to: not blank, not an option") {
  for (const char* bad : {"''", "'-oProxyCommand=x'", "'a b'"}) {
    std::string err = user_error_of([&] {
      parse_run_spec("r.yaml", fmt::format("name: r\ncluster: a\ngpus_per_node: 1\ncommand: 'true'\non: {}\n", bad));
    });
    CHECK_THAT(err, Catch::Matchers::Contains("r.yaml:5"));
    CHECK_THAT(err, Catch::Matchers::Contains("is not a host to ssh to"));
  }
}

TEST_CASE("a site the spec does not name, given as --site, is refused, listing its sites") {
  std::string err = user_error_of([] { parse_run_spec("r.yaml", kTwoSites, {}, "alice@other"); });
  CHECK_THAT(err, Catch::Matchers::Contains("no shape of this spec is at site 'alice@other'"));
  CHECK_THAT(err, Catch::Matchers::Contains("alice@ibex.kaust.edu.sa, alice@login.delta.ncsa.edu"));
}

TEST_CASE("a spec without `on:` names no site and is read as before") {
  RunSpec spec = parse_run_spec("r.yaml", "name: r\ncluster: a\ngpus_per_node: 1\ncommand: 'true'\n");
  CHECK_FALSE(spec.names_sites);
  CHECK(spec.shapes[0].host.empty());
}

TEST_CASE("a site's name is its host without the user, or the whole host where two differ only by the user") {
  std::vector<std::string> hosts = {"alice@ibex.kaust.edu.sa", "login.delta.ncsa.edu", "login-26.05", ""};
  CHECK(site_name(hosts[0], hosts) == "ibex.kaust.edu.sa");
  CHECK(site_name(hosts[1], hosts) == "login.delta.ncsa.edu");
  CHECK(site_name(hosts[2], hosts) == "login-26.05");
  CHECK(site_name("", hosts) == "here");
  std::vector<std::string> clash = {"a@x.org", "b@x.org"};
  CHECK(site_name(clash[0], clash) == "a_x.org");
  CHECK(site_name("we ird/host", {"we ird/host"}) == "we_ird_host");
}

TEST_CASE("two hosts whose site names would be one are refused at their line, and so is a name too long for a file") {
  std::string err = user_error_of([] {
    parse_run_spec("r.yaml", "name: r\ncluster: a\ngpus_per_node: 1\ncommand: 'true'\non: \"h!x\"\n"
                             "alternatives:\n  - {on: \"h?x\", nodes: 2}\n");
  });
  CHECK_THAT(err, Catch::Contains("r.yaml:7:"));
  CHECK_THAT(err, Catch::Contains("'h!x' and 'h?x' would both be site h_x"));
  err = user_error_of([] {
    parse_run_spec("r.yaml", "name: r\ncluster: a\ngpus_per_node: 1\ncommand: 'true'\non: \"a_h\"\n"
                             "alternatives:\n  - {on: \"b@h\", nodes: 2}\n  - {on: \"a@h\", nodes: 3}\n");
  });
  CHECK_THAT(err, Catch::Contains("would both be site a_h"));
  err = user_error_of([] {
    parse_run_spec("r.yaml", "name: r\ncluster: a\ngpus_per_node: 1\ncommand: 'true'\non: h1\nalternatives:\n"
                             "  - {on: " + std::string(240, 'h') + ", nodes: 2}\n");
  });
  CHECK_THAT(err, Catch::Contains("r.yaml:7:") && Catch::Contains("makes a site's name of 240 bytes, too long"));
  // One login host under two names (an alias and user@host) is two sites,
  // each its own run there (race-gate --site keeps them apart).
  RunSpec two = parse_run_spec("r.yaml", "name: r\ncluster: a\ngpus_per_node: 1\ncommand: 'true'\non: h1\n"
                                         "alternatives:\n  - {on: u@h1, nodes: 2}\n");
  CHECK(site_name("h1", spec_hosts(two)) == "h1");
  CHECK(site_name("u@h1", spec_hosts(two)) == "u_h1");
}

TEST_CASE("remote_dir: without on: names a folder nowhere: refused at its line") {
  std::string err = user_error_of([] {
    parse_run_spec("r.yaml", "name: r\ncluster: a\ngpus_per_node: 1\ncommand: 'true'\nremote_dir: proj\n");
  });
  CHECK_THAT(err, Catch::Contains("r.yaml:5:13: remote_dir: is the folder at the login host `on:` names"));
  err = user_error_of([] {
    parse_run_spec("r.yaml", "name: r\ncluster: a\ngpus_per_node: 1\ncommand: 'true'\n"
                             "alternatives:\n  - {remote_dir: proj, nodes: 2}\n");
  });
  CHECK_THAT(err, Catch::Contains("alternatives[0].remote_dir: is the folder at a site's login host"));
}

TEST_CASE("a site's keys: the same value in another order or style is the same, and its command: replaces trainer:") {
  RunSpec spec = parse_run_spec(
      "r.yaml",
      "name: r\ncluster: a\ngpus_per_node: 1\ntrainer: {model: resnet50, data: /d, epochs: 3}\non: h1\n"
      "alternatives:\n"
      "  - {on: h2, nodes: 3, env: {A: '1', B: two}, command: [python3, t.py]}\n"
      "  - on: h2\n    nodes: 2\n    env:\n      B: \"two\"\n      A: 1\n    command: [python3, t.py]\n");
  RunSpec h2 = parse_run_spec("r.yaml",
                              "name: r\ncluster: a\ngpus_per_node: 1\ntrainer: {model: resnet50, data: /d, epochs: 3}\n"
                              "on: h1\nalternatives:\n  - {on: h2, nodes: 2, command: [python3, t.py]}\n",
                              {}, "h2");
  CHECK(h2.command_argv == std::vector<std::string>{"python3", "t.py"});
  CHECK(spec.shapes.size() == 3);
}
