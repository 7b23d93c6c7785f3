#include "catch.hpp"

#include "slurm/site_limits_check.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "slurm/site_limits_read.hpp"

using namespace ddpctl;

namespace {

// As Slurm 22.05 printed them on the local cluster (scripts/local-slurm),
// with a QOS gpu2 (MaxTRESPerJob=gres/gpu=2, MaxWall=4h, MaxJobsPerUser=5)
// and an account `limited` (GrpTRES=gres/gpu=3) whose default QOS it is.
const char* kQos = "normal||||||||||\ngpu2|gres/gpu=2||||04:00:00|5||||\n";
const char* kAssocs =
    "limited|root||||gpu2|gpu2||||||||\n"
    "lusu|root||||gpu2,normal|||||||||\n"
    "limited||||root|normal||gres/gpu=3|||||||\n"
    "root|||||normal|||||||||\n";
const char* kPartitions =
    "PartitionName=a100-80gb AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL AllocNodes=ALL Default=NO QoS=N/A "
    "DefaultTime=NONE MaxNodes=UNLIMITED MaxTime=02:00:00 MinNodes=0 Nodes=a[1-2] State=UP TotalNodes=2\n"
    "PartitionName=cpu AllowGroups=ALL AllowAccounts=lusu,other AllowQos=ALL Default=YES QoS=N/A MaxNodes=2 "
    "MaxTime=1-00:00:00 Nodes=g[1-4] State=UP\n";

SiteLimits site() {
  SiteLimits s;
  s.user = "root";
  s.default_account = "lusu";
  s.accounting = true;
  s.qos = parse_qos(kQos);
  // Fields as sacctmgr's kAssocFormat orders them.
  s.assocs = parse_assocs(
      "limited|root|||gpu2|gpu2||||||||\n"
      "lusu|root|||gpu2,normal|||||||||\n"
      "limited|||root|normal||gres/gpu=3|||||||\n"
      "root||||normal|||||||||\n");
  s.partitions = parse_partitions(kPartitions);
  return s;
}

JobAsk ask(int nodes, int gpus, long long time_s, const std::string& account = "limited") {
  JobAsk j;
  j.nodes = nodes;
  j.gpus_per_node = gpus;
  j.cpus_per_node = 1;
  j.time_s = time_s;
  j.partition = "a100-80gb";
  j.account = account;
  j.fitting = {"a1", "a2"};
  return j;
}

const long long kNow = 1795633307;

}  // namespace

TEST_CASE("sacctmgr's -P lines are read field by field") {
  auto qos = parse_qos(kQos);
  REQUIRE(qos.count("gpu2"));
  CHECK(qos["gpu2"].max_per_job == Tres{{"gres/gpu", 2}});
  CHECK(qos["gpu2"].max_wall_s == 4 * 3600);
  CHECK(qos["gpu2"].max_jobs_per_user == 5);
  CHECK_FALSE(qos["normal"].max_wall_s);
  CHECK(parse_assocs(kAssocs).size() == 4);
  CHECK(parse_tres("cpu=4,mem=4G,gres/gpu:a100=2") == Tres{{"cpu", 4}, {"mem", 4096}, {"gres/gpu:a100", 2}});
}

TEST_CASE("a sacctmgr line that cannot be read is a note, never a missing limit") {
  std::vector<std::string> unread;
  // A format change: fewer fields than asked for; a MaxWall that is not a time.
  auto qos = parse_qos("gpu2|gres/gpu=2|||04:00:00|5\nslow|||||4 hours|||||\nnormal||||||||||\n", &unread);
  CHECK_FALSE(qos.count("gpu2"));
  CHECK(qos.count("slow"));
  CHECK_FALSE(qos["slow"].max_wall_s);
  REQUIRE(unread.size() == 2);
  CHECK(unread[0] == "sacctmgr show qos line 1 ('gpu2|gres/gpu=2|||04:00:00|5'): 6 field(s), 11 expected");
  CHECK(unread[1] == "sacctmgr show qos line 2 ('slow|||||4 hours|||||'): MaxWall '4 hours' is not a time");

  unread.clear();
  CHECK(parse_assocs("lusu|root||||gpu2\nlimited|||root|normal|||||2-xx:00|||||\n", &unread).size() == 1);
  REQUIRE(unread.size() == 2);
  CHECK(unread[0] == "sacctmgr show assoc line 1 ('lusu|root||||gpu2'): 6 field(s), 14 expected");
  CHECK(unread[1] == "sacctmgr show assoc line 2 ('limited|||root|normal|||||2-xx:00|||||'): MaxWall '2-xx:00' is not a time");

  SECTION("the preflight says which limits it did not check") {
    SiteLimits s = site();
    s.unread = unread;
    auto lines = unread_limits(s);
    REQUIRE_FALSE(lines.empty());
    CHECK(lines[0] == "limits not checked: cannot read sacctmgr show assoc line 1 ('lusu|root||||gpu2'): 6 field(s), 14 expected");
  }
  SECTION("well-formed lines, no notes") {
    unread.clear();
    parse_qos(kQos, &unread);
    parse_assocs(kAssocs, &unread);
    CHECK(unread.empty());
  }
}

TEST_CASE("partitions and reservations from scontrol -o") {
  auto parts = parse_partitions(kPartitions);
  CHECK(parts["a100-80gb"].max_time_s == 7200);
  CHECK_FALSE(parts["a100-80gb"].max_nodes);
  CHECK(parts["a100-80gb"].allow_accounts.empty());
  CHECK(parts["cpu"].allow_accounts == std::vector<std::string>{"lusu", "other"});
  CHECK(parts["cpu"].max_nodes == 2);
  CHECK(parts["cpu"].is_default);

  auto resv = parse_reservations(
      "ReservationName=maint StartTime=1795636907 EndTime=1795644107 Duration=02:00:00 Nodes=a[1-2],g[1-4] "
      "NodeCnt=6 CoreCnt=16 Features=(null) PartitionName=(null) Flags=MAINT,SPEC_NODES TRES=cpu=16 Users=root "
      "Groups=(null) Accounts=(null) Licenses=(null) State=INACTIVE BurstBuffer=(null) MaxStartDelay=(null)\n");
  REQUIRE(resv.size() == 1);
  CHECK(resv[0].start == 1795636907);
  CHECK(resv[0].nodes.size() == 6);
  CHECK(resv[0].maintenance());
  CHECK(resv[0].users == std::vector<std::string>{"root"});
  CHECK(parse_reservations("No reservations in the system\n").empty());
}

TEST_CASE("assoc_mgr's usage: each account's group, each QOS, and the user's own") {
  const char* mgr =
      "Current Association Manager state\n\nAssociation Records\n\n"
      "ClusterName=local Account=limited UserName= Partition= Priority=0 ID=7\n"
      "    GrpJobs=N(1) GrpJobsAccrue=N(0)\n"
      "    GrpTRES=cpu=N(1),mem=N(256),node=N(1),billing=N(1),gres/gpu=3(1)\n"
      "ClusterName=local Account=limited UserName=root(0) Partition= Priority=0 ID=8\n"
      "    GrpJobs=N(1) GrpJobsAccrue=N(0)\n"
      "    GrpTRES=cpu=N(1),gres/gpu=N(1)\n\n"
      "QOS Records\n\nQOS=gpu2(2)\n"
      "    GrpJobs=N(1) GrpJobsAccrue=N(0) GrpSubmitJobs=N(1) GrpWall=N(0.00)\n"
      "    GrpTRES=cpu=N(1),mem=N(256),gres/gpu=N(1)\n"
      "    MaxTRESPJ=gres/gpu=2\n"
      "    Account Limits\n      limited\n        MaxJobsPA=N(1) MaxSubmitJobsPA=N(1)\n"
      "    User Limits\n      0\n        MaxJobsPU=5(1) MaxJobsAccruePU=N(0) MaxSubmitJobsPU=N(1)\n"
      "        MaxTRESPU=cpu=N(1),gres/gpu=N(1)\n"
      "      1000\n        MaxJobsPU=5(4) MaxSubmitJobsPU=N(9)\n";
  Usage u = parse_assoc_mgr(mgr, "0");
  CHECK(u.known);
  CHECK(u.account_tres["limited"]["gres/gpu"] == 1);
  CHECK(u.account_jobs["limited"] == 1);
  CHECK(u.account_jobs["limited/root"] == 1);
  CHECK(u.qos_tres["gpu2"]["gres/gpu"] == 1);
  CHECK(u.qos_user_jobs["gpu2"] == 1);
  CHECK(u.qos_user_submit["gpu2"] == 1);  // not user 1000's 9
  CHECK(u.qos_user_tres["gpu2"]["gres/gpu"] == 1);
  // 26.05 names users as "root(0)".
  CHECK(parse_assoc_mgr("QOS=gpu2(2)\n    GrpTRES=gres/gpu=N(0)\n    User Limits\n      root(0)\n"
                        "        MaxJobsPU=N(3)\n",
                        "0")
            .qos_user_jobs["gpu2"] == 3);
}

TEST_CASE("a shape over a per-job QOS limit can never start, and the limit is named") {
  Feasibility f = check_limits(ask(1, 4, 3600), site(), kNow);
  CHECK(f.kind == Feasibility::Kind::Never);
  CHECK(f.qos == "gpu2");  // the association's default QOS
  REQUIRE_FALSE(f.never.empty());
  CHECK(f.never[0].field == "gpus_per_node");
  CHECK(f.never[0].message == "4 GPUs per job asked; QOS gpu2 allows 2 GPUs per job (MaxTRESPerJob)");
  // The account's GrpTRES (3) is smaller than 4 as well.
  bool group = false;
  for (const auto& p : f.never) group |= p.message == "4 GPUs in all asked; account limited allows 3 GPUs in all (GrpTRES)";
  CHECK(group);
  CHECK(check_limits(ask(1, 2, 3600), site(), kNow).kind == Feasibility::Kind::Ok);
}

TEST_CASE("time limits: the QOS's MaxWall and the partition's MaxTime") {
  SiteLimits s = site();
  s.partitions["a100-80gb"].max_time_s = 86400;
  Feasibility f = check_limits(ask(1, 1, 5 * 3600), s, kNow);
  REQUIRE(f.kind == Feasibility::Kind::Never);
  CHECK(f.never[0].field == "time");
  CHECK(f.never[0].message == "time limit 5h asked; QOS gpu2 allows 4h (MaxWall)");
  Feasibility p = check_limits(ask(1, 1, 3 * 3600, "lusu"), site(), kNow);
  REQUIRE(p.kind == Feasibility::Kind::Never);
  CHECK(p.never[0].message == "time limit 3h asked; partition a100-80gb allows 2h (MaxTime)");
}

TEST_CASE("partition access, node counts and QOS the association may not use") {
  JobAsk j = ask(3, 0, 3600, "limited");
  j.partition = "cpu";
  Feasibility f = check_limits(j, site(), kNow);
  REQUIRE(f.never.size() == 2);
  CHECK(f.never[0].message == "3 nodes asked; partition cpu allows 2 nodes per job (MaxNodes)");
  CHECK(f.never[1].message == "partition cpu does not take jobs of account limited (AllowAccounts=lusu, other)");
  JobAsk q = ask(1, 1, 3600, "lusu");
  q.qos = "gpu9";
  Feasibility g = check_limits(q, site(), kNow);
  REQUIRE_FALSE(g.never.empty());
  CHECK(g.never[0].message == "QOS gpu9 is not one your association with account lusu may use; yours: gpu2, normal");
}

TEST_CASE("an account's Max limits are inherited by its users, Grp limits apply at every level") {
  SiteLimits s = site();
  s.assocs = parse_assocs(
      "team|root|||normal|||||||||\n"
      "team|||dept|normal|||||||||\n"
      "dept|||root|normal||gres/gpu=8|gres/gpu=4||08:00:00||||\n"
      "root||||normal|||||||||\n");
  JobAsk j = ask(2, 4, 9 * 3600, "team");
  j.fitting = {"a1", "a2", "a3"};
  s.partitions.clear();
  Feasibility f = check_limits(j, s, kNow);
  REQUIRE(f.never.size() == 2);
  CHECK(f.never[0].message == "8 GPUs per job asked; account dept allows 4 GPUs per job (MaxTRES)");
  CHECK(f.never[1].message == "time limit 9h asked; account dept allows 8h (MaxWall)");
}

TEST_CASE("usage holds a shape now: the group's, the QOS's and the user's own, with what frees it") {
  SiteLimits s = site();
  s.assocs.push_back(parse_assocs("big|||root|normal||gres/gpu=16|||||||\n").front());
  s.assocs.push_back(parse_assocs("big|root|||normal|||||||||\n").front());
  s.usage.known = true;
  s.usage.account_tres["big"]["gres/gpu"] = 14;
  Feasibility f = check_limits(ask(1, 4, 3600, "big"), s, kNow);
  CHECK(f.kind == Feasibility::Kind::NotNow);
  REQUIRE(f.not_now.size() == 1);
  CHECK(f.not_now[0] == "AssocGrpGRES: account big's group uses 14 of 16 GPUs; this shape needs 4: it waits until 2 GPUs are free");

  s.usage.qos_user_jobs["gpu2"] = 5;
  Feasibility q = check_limits(ask(1, 1, 3600), s, kNow);
  REQUIRE(q.not_now.size() == 1);
  CHECK(q.not_now[0] == "QOSMaxJobsPerUserLimit: you run 5 jobs in QOS gpu2, the most it allows; it waits until one ends");
  s.usage.known = false;  // assoc_mgr unreadable: no guesses
  CHECK(check_limits(ask(1, 1, 3600), s, kNow).kind == Feasibility::Kind::Ok);
}

TEST_CASE("a maintenance reservation on every fitting node: when the shape can start, and the time that starts it now") {
  SiteLimits s = site();
  Reservation r;
  r.name = "maint";
  r.flags = "MAINT,SPEC_NODES";
  r.start = kNow + 3600 - 5;  // created an hour before, looked at 5 s later
  r.end = r.start + 7200;
  r.nodes = {"a1", "a2", "g1", "g2", "g3", "g4"};
  s.reservations = {r};
  Feasibility f = check_limits(ask(1, 2, 2 * 3600, "lusu"), s, kNow);
  REQUIRE(f.kind == Feasibility::Kind::Later);
  CHECK(f.reservation == "maint");
  CHECK(f.earliest_start == r.end);
  CHECK(f.fit_time_s == 59 * 60);
  CHECK(f.later.find("--time 59m or less starts now") != std::string::npos);
  CHECK(f.later.find("reservation maint (maintenance)") != std::string::npos);

  // A time limit that ends before it is fine; so is a job that names it, or
  // a shape with a node outside it.
  CHECK(check_limits(ask(1, 2, 50 * 60, "lusu"), s, kNow).kind == Feasibility::Kind::Ok);
  JobAsk in = ask(1, 2, 2 * 3600, "lusu");
  in.reservation = "maint";
  CHECK(check_limits(in, s, kNow).kind == Feasibility::Kind::Ok);
  JobAsk wide = ask(1, 2, 2 * 3600, "lusu");
  wide.fitting = {"a1", "a2", "a3"};
  CHECK(check_limits(wide, s, kNow).kind == Feasibility::Kind::Ok);

  // Half a minute or less to spare: one minute less.
  s.reservations[0].start = kNow + 3600 - 40;
  CHECK(check_limits(ask(1, 2, 2 * 3600, "lusu"), s, kNow).fit_time_s == 58 * 60);
  // In progress: no shorter limit helps; it starts at the end.
  s.reservations[0].start = kNow - 60;
  Feasibility now = check_limits(ask(1, 2, 2 * 3600, "lusu"), s, kNow);
  CHECK(now.kind == Feasibility::Kind::Later);
  CHECK_FALSE(now.fit_time_s);
  CHECK(now.earliest_start == s.reservations[0].end);
}

TEST_CASE("time words a user writes") {
  CHECK(fit_time_words(59 * 60) == "59m");
  CHECK(fit_time_words(90 * 60) == "1h30m");
  CHECK(fit_time_words(2 * 86400) == "2d");
  CHECK(tres_words("gres/gpu", 1) == "1 GPU");
}

TEST_CASE("every Slurm version's own answers (capture-limits.sh) give the same verdicts") {
  for (std::string version : {"22.05", "24.11", "26.05"}) {
    INFO("Slurm " << version);
    auto data = [&](const std::string& name) {
      return read_file(test::source_dir() + "/tests/unit/data/" + version + "/" + name);
    };
    SiteLimits s;
    s.user = "root";
    s.default_account = "lusu";
    s.accounting = true;
    s.qos = parse_qos(data("sacctmgr-qos.txt"), &s.unread);
    s.assocs = parse_assocs(data("sacctmgr-assoc-user.txt"), &s.unread);
    for (const auto& a : parse_assocs(data("sacctmgr-assoc-accounts.txt"), &s.unread))
      if (a.user.empty()) s.assocs.push_back(a);
    s.partitions = parse_partitions(data("scontrol-partition.txt"));
    s.reservations = parse_reservations(data("scontrol-reservation.txt"));
    s.usage = parse_assoc_mgr(data("scontrol-assoc-mgr.txt"), "0");
    CHECK(s.unread.empty());  // every line of every version read
    REQUIRE(s.qos.count("cap-gpu2"));
    CHECK(s.qos["cap-gpu2"].max_per_job == Tres{{"gres/gpu", 2}});
    CHECK(s.qos["cap-gpu2"].max_wall_s == 4 * 3600);
    REQUIRE(s.reservations.size() == 1);
    CHECK(s.reservations[0].maintenance());
    CHECK(s.reservations[0].nodes.size() == 6);
    CHECK(s.reservations[0].end - s.reservations[0].start == 7200);
    CHECK(s.partitions["a100-80gb"].max_time_s == 7200);
    CHECK(s.usage.account_tres["cap-grp"]["gres/gpu"] == 3);  // the running job's
    CHECK(s.usage.qos_user_jobs["normal"] == 1);
    long long now = s.reservations[0].start - 3600 + 5;

    JobAsk big = ask(1, 4, 600, "cap-grp");
    Feasibility never = check_limits(big, s, now);
    CHECK(never.qos == "cap-gpu2");
    REQUIRE_FALSE(never.never.empty());
    CHECK(never.never[0].message == "4 GPUs per job asked; QOS cap-gpu2 allows 2 GPUs per job (MaxTRESPerJob)");

    Feasibility held = check_limits(ask(1, 2, 600, "cap-grp"), s, now);
    CHECK(held.kind == Feasibility::Kind::NotNow);
    REQUIRE(held.not_now.size() == 1);
    CHECK(held.not_now[0] ==
          "AssocGrpGRES: account cap-grp's group uses 3 of 4 GPUs; this shape needs 2: it waits until 1 GPU is free");

    Feasibility later = check_limits(ask(1, 1, 7200, "cap-grp"), s, now);
    CHECK(later.kind == Feasibility::Kind::Later);
    CHECK(later.reservation == "cap-maint");
    CHECK(later.earliest_start == s.reservations[0].end);
    CHECK(later.fit_time_s == 59 * 60);
  }
}

TEST_CASE("limits Slurm does not enforce (no AccountingStorageEnforce=limits) are not held against a shape") {
  SiteLimits s = site();
  s.limits_enforced = false;
  s.enforce = "associations";
  // The QOS's 2 GPUs per job and the account's 3 in all: not enforced here.
  CHECK(check_limits(ask(1, 4, 3600), s, kNow).kind == Feasibility::Kind::Ok);
  // The partition's MaxTime is Slurm's own, enforced always.
  Feasibility f = check_limits(ask(1, 1, 3 * 3600, "lusu"), s, kNow);
  REQUIRE(f.kind == Feasibility::Kind::Never);
  CHECK(f.never[0].message == "time limit 3h asked; partition a100-80gb allows 2h (MaxTime)");
}
