// read_site_limits (limits_read.cpp): which commands it asks, how it walks the
// accounts up to root, and what it names as unread; Slurm's answers are the
// ones each version gave on the local cluster (tests/unit/data/<version>/,
// captured by capture-limits.sh). The parsers alone: test_limits.cpp.
#include "catch.hpp"

#include <algorithm>

#include "fake_runner.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "slurm/site_limits_read.hpp"

using namespace ddpctl;
using test::exits;

namespace {

std::string data(const std::string& version, const std::string& name) {
  return read_file(test::source_dir() + "/tests/unit/data/" + version + "/" + name);
}

// Every command read_site_limits runs, answered as `version` answered it.
// `scontrol show config` and `sacctmgr show user` have no capture: their
// one line each is written here as Slurm prints it.
void answer_as(test::FakeRunner& r, const std::string& version) {
  std::string user = current_user();
  r.on("sacctmgr", {"show", "qos"}, exits(0, data(version, "sacctmgr-qos.txt")));
  r.on("sacctmgr", {"show", "user"}, exits(0, "cap-grp\n"));
  r.on("sacctmgr", {"show", "assoc", "account="}, exits(0, data(version, "sacctmgr-assoc-accounts.txt")));
  r.on("sacctmgr", {"show", "assoc", "user=" + user}, exits(0, data(version, "sacctmgr-assoc-user.txt")));
  r.on("scontrol", {"show", "config"},
       exits(0, "Configuration data as of 2026-11-21T10:00:00\nAccountingStorageEnforce = associations,limits,qos\n"
                "AccountingStorageType   = accounting_storage/slurmdbd\n"));
  r.on("scontrol", {"-o", "show", "partition"}, exits(0, data(version, "scontrol-partition.txt")));
  r.on("env", {"SLURM_TIME_FORMAT=%s", "scontrol", "reservation"}, exits(0, data(version, "scontrol-reservation.txt")));
  r.on("scontrol", {"show", "assoc_mgr"}, exits(0, data(version, "scontrol-assoc-mgr.txt")));
}

// From now on, calls of `program` with `with` are answered `result` (a rule
// of its own: later rules win over answer_as's).
void answer(test::FakeRunner& r, const std::string& program, const std::vector<std::string>& with, CommandResult result) {
  r.on(program, with, [result](const std::vector<std::string>&) { return result; });
}

std::vector<std::string> accounts_of(const SiteLimits& s, bool with_user) {
  std::vector<std::string> out;
  for (const auto& a : s.assocs)
    if (a.user.empty() != with_user) out.push_back(a.account);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("read_site_limits: every version's answers give the QOS, the accounts up to root, partitions, reservations and usage") {
  for (std::string version : {"22.05", "24.11", "26.05"}) {
    INFO("Slurm " << version);
    test::FakeRunner r;
    answer_as(r, version);
    SlurmClient slurm(r);
    SiteLimits s = read_site_limits(slurm);
    CHECK(s.unread.empty());
    CHECK(s.accounting);
    CHECK(s.user == current_user());
    CHECK(s.default_account == "cap-grp");
    CHECK(s.limits_enforced);
    CHECK(s.enforce == "associations,limits,qos");
    REQUIRE(s.qos.count("cap-gpu2"));
    CHECK(s.qos["cap-gpu2"].max_per_job == Tres{{"gres/gpu", 2}});
    CHECK(s.qos["cap-gpu2"].max_jobs_per_user == 5);
    // The user's associations, then the accounts above them, once each.
    CHECK(accounts_of(s, true) == std::vector<std::string>{"cap-grp", "lusu", "other", "root"});
    CHECK(accounts_of(s, false) == std::vector<std::string>{"cap-grp", "root"});
    CHECK(r.count("sacctmgr", {"show", "assoc", "account="}) == 1);
    for (const auto& a : s.assocs)
      if (a.account == "cap-grp" && a.user.empty()) CHECK(a.grp == Tres{{"gres/gpu", 4}});
    CHECK(s.partitions.count("a100-80gb"));
    CHECK(s.partitions["a100-80gb"].max_time_s == 7200);
    REQUIRE(s.reservations.size() == 1);
    CHECK(s.reservations[0].name == "cap-maint");
    CHECK(s.reservations[0].maintenance());
    // The usage of the accounts it read, asked of assoc_mgr by name.
    CHECK(r.count("scontrol", {"assoc_mgr", "users=" + current_user(), "accounts=cap-grp,lusu,other,root"}) == 1);
    CHECK(s.usage.known);
  }
}

TEST_CASE("read_site_limits: without accounting, the QOS and association limits are named as unread, Slurm's own are still read") {
  test::FakeRunner r;
  answer_as(r, "26.05");
  answer(r, "sacctmgr", {}, exits(1, "", "sacctmgr: error: Problem talking to the database: Connection refused"));
  SlurmClient slurm(r);
  SiteLimits s = read_site_limits(slurm);
  CHECK_FALSE(s.accounting);
  REQUIRE(s.unread.size() == 1);
  CHECK_THAT(s.unread[0], Catch::StartsWith("QOS and association limits: sacctmgr (") &&
                              Catch::Contains("Connection refused"));
  CHECK(s.qos.empty());
  CHECK(s.assocs.empty());
  CHECK(s.partitions.count("a100-80gb"));
  CHECK(s.reservations.size() == 1);
  // No usage is asked for limits that were not read.
  CHECK(r.count("scontrol", {"assoc_mgr"}) == 0);
  CHECK(r.count("sacctmgr") == 1);
}

TEST_CASE("read_site_limits: each command that fails is named, and nothing of it is guessed") {
  test::FakeRunner r;
  answer_as(r, "24.11");
  answer(r, "sacctmgr", {"show", "assoc", "account="}, exits(1, "", "sacctmgr: error: timeout"));
  answer(r, "scontrol", {"-o", "show", "partition"}, exits(1, "", "slurm_load_partitions: Unable to contact slurm controller"));
  answer(r, "scontrol", {"show", "assoc_mgr"}, exits(1, "", "assoc_mgr: Access denied"));
  answer(r, "scontrol", {"show", "config"}, exits(1, "", "down"));
  SlurmClient slurm(r);
  SiteLimits s = read_site_limits(slurm);
  REQUIRE(s.unread.size() == 3);
  CHECK_THAT(s.unread[0], Catch::StartsWith("the accounts' limits: sacctmgr show assoc (") && Catch::Contains("timeout"));
  CHECK_THAT(s.unread[1], Catch::StartsWith("partition limits: scontrol show partition (") &&
                              Catch::Contains("Unable to contact"));
  CHECK_THAT(s.unread[2], Catch::StartsWith("current usage: scontrol show assoc_mgr (") && Catch::Contains("Access denied"));
  CHECK(accounts_of(s, false).empty());  // only the user's own
  CHECK(accounts_of(s, true).size() == 4);
  CHECK(s.partitions.empty());
  CHECK_FALSE(s.usage.known);
  // A configuration that cannot be read: the limits are taken as enforced.
  CHECK(s.limits_enforced);
  CHECK(s.enforce.empty());
}

TEST_CASE("read_site_limits: no reservations is an answer, not a failure, enforcement as the site configures it") {
  test::FakeRunner r;
  answer_as(r, "22.05");
  answer(r, "env", {"SLURM_TIME_FORMAT=%s", "scontrol", "reservation"}, exits(1, "No reservations in the system\n"));
  answer(r, "scontrol", {"show", "config"}, exits(0, "AccountingStorageEnforce = associations\n"));
  answer(r, "sacctmgr", {"show", "assoc", "user="}, exits(1, "", "sacctmgr: error: user unknown"));
  SlurmClient slurm(r);
  SiteLimits s = read_site_limits(slurm);
  CHECK(s.reservations.empty());
  CHECK_FALSE(s.limits_enforced);
  CHECK(s.enforce == "associations");
  REQUIRE(s.unread.size() == 1);
  CHECK_THAT(s.unread[0], Catch::StartsWith("your associations: sacctmgr show assoc ("));
  // Without associations no account is walked; assoc_mgr is asked for the user alone.
  CHECK(r.count("sacctmgr", {"show", "assoc", "account="}) == 0);
  CHECK(r.count("scontrol", {"assoc_mgr", "accounts="}) == 0);
  CHECK(r.count("scontrol", {"assoc_mgr", "users="}) == 1);
}
