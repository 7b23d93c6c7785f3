// A grid's arrays against the user's submit limits (limits.hpp
// submit_limits, grid_limits.hpp): every task is a job to MaxSubmitJobs and
// its kin, summed over the arrays where they land, with the jobs already
// queued; refused before any sbatch, the limit named.
#include "catch.hpp"

#include <filesystem>
#include <fmt/format.h>

#include "fake_runner.hpp"
#include "base/files.hpp"
#include "fixtures.hpp"
#include "sweep/grid_limits.hpp"
#include "helpers.hpp"
#include "slurm/site_limits_read.hpp"
#include "sweep/sweep_grid.hpp"
#include "sweep/sweep_retry.hpp"
#include "base/text.hpp"

using namespace ddpctl;
using test::exits;

namespace {

// A QOS line of kQosFormat: Name, MaxTRESPerJob, MaxTRESPerNode,
// MaxTRESPerUser, GrpTRES, MaxWall, MaxJobsPerUser, MaxSubmitJobsPerUser,
// GrpJobs, GrpSubmitJobs, Flags.
std::string qos_line(const std::string& name, const std::string& max_submit_pu, const std::string& grp_submit = "",
                     const std::string& flags = "") {
  return fmt::format("{}|||||||{}||{}|{}\n", name, max_submit_pu, grp_submit, flags);
}
// An association line of kAssocFormat: Account, User, Partition, ParentName,
// QOS, DefaultQOS, GrpTRES, MaxTRES, MaxTRESPerNode, MaxWall, MaxJobs,
// MaxSubmit, GrpJobs, GrpSubmit.
std::string assoc_line(const std::string& account, const std::string& user, const std::string& parent,
                       const std::string& max_submit = "", const std::string& grp_submit = "") {
  return fmt::format("{}|{}||{}|normal,gpu|||||||{}||{}\n", account, user, parent, max_submit, grp_submit);
}

// The user `root` in account lusu (under root), QOS normal and gpu.
SiteLimits site(const std::string& qos, const std::string& assocs) {
  SiteLimits s;
  s.user = "root";
  s.default_account = "lusu";
  s.accounting = true;
  s.qos = parse_qos(qos);
  s.assocs = parse_assocs(assocs);
  s.partitions = parse_partitions(
      "PartitionName=cpu AllowAccounts=ALL AllowQos=ALL Default=YES QoS=N/A MaxTime=02:00:00 Nodes=g[1-4]\n"
      "PartitionName=big AllowAccounts=ALL AllowQos=ALL Default=NO QoS=bigq MaxTime=02:00:00 Nodes=g[1-4]\n");
  return s;
}

// scontrol show assoc_mgr as 22.05 prints it, with `user_submit` of the
// user's jobs queued or running in QOS normal and in account lusu, and
// `others` more of other users in both.
std::string assoc_mgr(int user_submit, int others = 0) {
  return fmt::format(
      "Current Association Manager state\n\nAssociation Records\n\n"
      "ClusterName=local Account=lusu UserName= Partition= Priority=0 ID=3\n"
      "    GrpJobs=N({0}) GrpJobsAccrue=N(0)\n"
      "    GrpSubmitJobs=N({0}) GrpWall=N(0.00)\n"
      "    GrpTRES=cpu=N(0),mem=N(0),node=N(0),gres/gpu=N(0)\n"
      "ClusterName=local Account=lusu UserName=root(0) Partition= Priority=0 ID=5\n"
      "    GrpJobs=N({1}) GrpJobsAccrue=N(0)\n"
      "    GrpSubmitJobs=N({1}) GrpWall=N(0.00)\n"
      "    GrpTRES=cpu=N(0),mem=N(0),node=N(0),gres/gpu=N(0)\n"
      "    MaxJobs= MaxJobsAccrue= MaxSubmitJobs= MaxWallPJ=\n\n"
      "QOS Records\n\nQOS=normal(1)\n"
      "    GrpJobs=N({0}) GrpJobsAccrue=N(0) GrpSubmitJobs=N({0}) GrpWall=N(0.00)\n"
      "    GrpTRES=cpu=N(0),mem=N(0),node=N(0),gres/gpu=N(0)\n"
      "    User Limits\n      0\n        MaxJobsPU=N({1}) MaxJobsAccruePU=N(0) MaxSubmitJobsPU=N({1})\n",
      user_submit + others, user_submit);
}

SubmitAsk array(const std::string& label, long long cells, const std::string& qos = "",
                const std::string& partition = "cpu", const std::string& account = "") {
  SubmitAsk a;
  a.label = label;
  a.jobs = cells;
  a.job.partition = partition;
  a.job.qos = qos;
  a.job.account = account;
  return a;
}

const SubmitLimit* over(const std::vector<SubmitLimit>& limits, const std::string& slurm_name) {
  for (const auto& l : limits)
    if (l.slurm_name == slurm_name && l.over()) return &l;
  return nullptr;
}

}  // namespace

TEST_CASE("assoc_mgr's submitted jobs: each association's and QOS's GrpSubmitJobs count, the user's own per QOS") {
  Usage u = parse_assoc_mgr(assoc_mgr(3, 4), "0");
  REQUIRE(u.known);
  CHECK(u.account_submit["lusu"] == 7);
  CHECK(u.account_submit["lusu/root"] == 3);
  CHECK(u.qos_submit["normal"] == 7);
  CHECK(u.qos_user_submit["normal"] == 3);
  // Slurm 22.05's own answer (capture-limits.sh): one job of account cap-grp.
  Usage real = parse_assoc_mgr(read_file(test::source_dir() + "/tests/unit/data/22.05/scontrol-assoc-mgr.txt"), "0");
  CHECK(real.account_submit["cap-grp"] == 1);
  CHECK(real.account_submit["cap-grp/root"] == 1);
  CHECK(real.account_submit["root/root"] == 0);
  CHECK(real.qos_submit["normal"] == 1);
  CHECK(real.qos_submit["cap-gpu2"] == 0);
}

TEST_CASE("submit limits: every task of a grid is a job, the ones already queued count, the limit is named") {
  SiteLimits s = site(qos_line("normal", "30"), assoc_line("lusu", "root", "root") + assoc_line("lusu", "", "root"));
  s.usage = parse_assoc_mgr(assoc_mgr(3), "0");

  SECTION("more cells than the limit: never, whatever ends") {
    auto limits = submit_limits({array("2x1", 40)}, s);
    REQUIRE(limits.size() == 1);
    const SubmitLimit& l = limits[0];
    CHECK(l.over());
    CHECK(l.never());
    CHECK(l.asked == 40);
    CHECK(l.in_use == 3);
    CHECK(describe_submit_limit(l, SubmitWhat::Grid, 40) ==
          "the grid's 40 cells are 40 jobs to Slurm; QOS normal allows you 30 submitted jobs (MaxSubmitJobsPerUser) "
          "and you have 3 queued or running: 27 more fit; lower the grid, or submit it in parts (max_parallel does "
          "not change this: every task counts)");
  }
  SECTION("fewer than the limit, but not with the jobs already queued: refused too (sbatch takes an array whole)") {
    auto limits = submit_limits({array("2x1", 28)}, s);
    REQUIRE(limits.size() == 1);
    CHECK(limits[0].over());
    CHECK_FALSE(limits[0].never());
    CHECK(describe_submit_limit(limits[0], SubmitWhat::Grid, 28) ==
          "the grid's 28 cells are 28 jobs to Slurm; QOS normal allows you 30 submitted jobs (MaxSubmitJobsPerUser) "
          "and you have 3 queued or running: 27 more fit; wait until some of yours end, or lower the grid, or submit "
          "it in parts (max_parallel does not change this: every task counts; sbatch takes an array whole or not at "
          "all)");
  }
  SECTION("exactly the room left fits") {
    auto limits = submit_limits({array("2x1", 27)}, s);
    REQUIRE(limits.size() == 1);
    CHECK_FALSE(limits[0].over());
  }
  SECTION("the arrays of several shapes in one QOS are summed") {
    auto limits = submit_limits({array("1x2", 14), array("2x1", 14)}, s);
    REQUIRE(limits.size() == 1);
    CHECK(limits[0].asked == 28);
    CHECK(limits[0].labels == std::vector<std::string>{"1x2", "2x1"});
    CHECK(limits[0].over());
  }
  SECTION("arrays in different QOS are counted where each lands") {
    s.qos = parse_qos(qos_line("normal", "30") + qos_line("gpu", "10"));
    auto limits = submit_limits({array("1x2", 20, "normal"), array("2x1", 12, "gpu")}, s);
    REQUIRE(limits.size() == 2);
    CHECK_FALSE(limits[0].over());
    CHECK(limits[1].whose == "QOS gpu");
    CHECK(limits[1].over());
    CHECK(limits[1].in_use == 0);  // assoc_mgr lists no user of gpu: none queued there
    CHECK(describe_submit_limit(limits[1], SubmitWhat::Grid, 32) ==
          "the grid's 12 cells of shape 2x1 are 12 jobs to Slurm; QOS gpu allows you 10 submitted jobs "
          "(MaxSubmitJobsPerUser) and you have 0 queued or running: 10 more fit; lower the grid, or submit it in "
          "parts (max_parallel does not change this: every task counts)");
  }
  SECTION("a retry's words and remedy") {
    auto limits = submit_limits({array("2x1", 28)}, s);
    CHECK_THAT(describe_submit_limit(limits[0], SubmitWhat::Retry, 28),
               Catch::StartsWith("the retry's 28 cells are 28 jobs to Slurm;") &&
                   Catch::Contains("retry fewer cells at once (--cells)"));
  }
  SECTION("the current usage unread: the limit alone is checked") {
    s.usage = Usage{};
    CHECK_FALSE(submit_limits({array("2x1", 29)}, s)[0].over());
    auto limits = submit_limits({array("2x1", 31)}, s);
    REQUIRE(limits[0].over());
    CHECK_FALSE(limits[0].in_use);
    CHECK_THAT(describe_submit_limit(limits[0], SubmitWhat::Grid, 31),
               Catch::Contains("(MaxSubmitJobsPerUser): more than it takes even with nothing else queued; lower"));
  }
  SECTION("limits Slurm does not enforce are not held against the grid") {
    s.limits_enforced = false;
    CHECK(submit_limits({array("2x1", 40)}, s).empty());
  }
}

TEST_CASE("submit limits: associations' MaxSubmitJobs (inherited) and GrpSubmitJobs (every level), a QOS's winning") {
  SECTION("the account's MaxSubmitJobs is its users': inherited, and said where it is set") {
    SiteLimits s = site(qos_line("normal", ""),
                        assoc_line("lusu", "root", "root") + assoc_line("lusu", "", "root", "20") +
                            assoc_line("root", "", ""));
    s.usage = parse_assoc_mgr(assoc_mgr(3, 10), "0");
    auto limits = submit_limits({array("2x1", 18)}, s);
    const SubmitLimit* l = over(limits, "MaxSubmitJobs");
    REQUIRE(l);
    CHECK(l->in_use == 3);  // the user's own association's jobs, not the account's 13
    CHECK(describe_submit_limit(*l, SubmitWhat::Grid, 18) ==
          "the grid's 18 cells are 18 jobs to Slurm; your association with account lusu allows you 20 submitted "
          "jobs (MaxSubmitJobs, set on account lusu) and you have 3 queued or running: 17 more fit; wait until some "
          "of yours end, or lower the grid, or submit it in parts (max_parallel does not change this: every task "
          "counts; sbatch takes an array whole or not at all)");
  }
  SECTION("an account's GrpSubmitJobs counts every user's jobs under it") {
    SiteLimits s = site(qos_line("normal", ""), assoc_line("lusu", "root", "root") +
                                                    assoc_line("lusu", "", "root", "", "20") + assoc_line("root", "", ""));
    s.usage = parse_assoc_mgr(assoc_mgr(3, 10), "0");
    auto limits = submit_limits({array("2x1", 8)}, s);
    const SubmitLimit* l = over(limits, "GrpSubmitJobs");
    REQUIRE(l);
    CHECK(l->in_use == 13);
    CHECK_THAT(describe_submit_limit(*l, SubmitWhat::Grid, 8),
               Catch::Contains("account lusu allows 20 submitted jobs from all its users together (GrpSubmitJobs) "
                               "and they have 13 queued or running: 7 more fit; wait until some of them end"));
    CHECK(submit_limits({array("2x1", 7)}, s).at(0).over() == false);
  }
  SECTION("a QOS's MaxSubmitJobsPerUser replaces the association's MaxSubmitJobs (acct_policy_validate)") {
    SiteLimits s = site(qos_line("normal", "") + qos_line("gpu", "50"),
                        assoc_line("lusu", "root", "root", "5") + assoc_line("lusu", "", "root"));
    s.usage = parse_assoc_mgr(assoc_mgr(0), "0");
    CHECK(over(submit_limits({array("2x1", 8, "normal")}, s), "MaxSubmitJobs"));
    auto with_qos = submit_limits({array("2x1", 8, "gpu")}, s);
    CHECK_FALSE(over(with_qos, "MaxSubmitJobs"));
    CHECK(with_qos.size() == 1);
    CHECK(with_qos[0].slurm_name == "MaxSubmitJobsPerUser");
  }
  SECTION("the partition's QOS comes first, unless the job's has OverPartQOS") {
    SiteLimits s = site(qos_line("normal", "") + qos_line("gpu", "50") + qos_line("bigq", "4"),
                        assoc_line("lusu", "root", "root") + assoc_line("lusu", "", "root"));
    s.usage = parse_assoc_mgr(assoc_mgr(0), "0");
    auto limits = submit_limits({array("2x1", 8, "gpu", "big")}, s);
    REQUIRE(limits.size() == 1);
    CHECK(limits[0].whose == "QOS bigq");
    CHECK(limits[0].over());
    s.qos = parse_qos(qos_line("normal", "") + qos_line("gpu", "50", "", "OverPartQOS") + qos_line("bigq", "4"));
    limits = submit_limits({array("2x1", 8, "gpu", "big")}, s);
    REQUIRE(limits.size() == 1);
    CHECK(limits[0].whose == "QOS gpu");
    CHECK_FALSE(limits[0].over());
  }
}

namespace {

// A grid spec of `cells` cells on the fake Slurm, whose QOS normal allows
// `max_submit` submitted jobs per user, `queued` of them already used.
struct GridFixture {
  test::TempDir tmp;
  test::FakeSlurm slurm;
  test::RecordingOutput out;
  SweepRequest req;
  GridFixture(int cells, int max_submit, int queued) {
    std::string values;
    for (int i = 0; i < cells; ++i) values += (i ? ", " : "") + std::to_string(i);
    req.spec = test::write_one_shape_spec(tmp.path, "grid", "grid:\n  env.SEED: [" + values + "]\n");
    req.runs_root = tmp.path + "/runs";
    req.templates_dir = test::source_dir() + "/templates";
    req.snapshot = false;
    limit(max_submit, queued);
  }
  // From now on (a rule of its own each: later rules win over FakeSlurm's).
  void answer(const std::string& program, const std::vector<std::string>& with, CommandResult result) {
    slurm.runner.on(program, with, [result](const std::vector<std::string>&) { return result; });
  }
  void limit(int max_submit, int queued) {
    std::string user = current_user();
    answer("sacctmgr", {"show", "qos"}, exits(0, qos_line("normal", std::to_string(max_submit))));
    answer("sacctmgr", {"show", "user"}, exits(0, "lusu\n"));
    answer("sacctmgr", {"show", "assoc", "user=" + user}, exits(0, fmt::format("lusu|{}||root|normal|normal||||||||\n", user)));
    answer("sacctmgr", {"show", "assoc", "account="}, exits(0, "lusu|||root|normal|||||||||\nroot||||normal|||||||||\n"));
    answer("scontrol", {"show", "assoc_mgr"}, exits(0, assoc_mgr(queued)));
  }
  size_t sbatches() const { return slurm.runner.count("sbatch", {"--parsable"}); }
};

}  // namespace

TEST_CASE("sweep of a grid over the user's submit limit: refused at the grid's line, before any sbatch or record") {
  GridFixture f(6, 8, 3);
  std::string err = test::user_error_of([&] { run_grid_sweep(f.req, f.slurm.ctx, f.out); });
  CHECK_THAT(err, Catch::Contains("grid.yaml:11:3: grid: the grid's 6 cells are 6 jobs to Slurm; QOS normal allows "
                                  "you 8 submitted jobs (MaxSubmitJobsPerUser) and you have 3 queued or running: 5 "
                                  "more fit; wait until some of yours end") &&
                  Catch::Contains("nothing was submitted"));
  CHECK(f.sbatches() == 0);
  CHECK((!std::filesystem::exists(f.req.runs_root) || list_runs(f.req.runs_root).empty()));
  SECTION("--dry-run says the same") {
    f.req.dry_run = true;
    CHECK_THAT(test::user_error_of([&] { run_grid_sweep(f.req, f.slurm.ctx, f.out); }),
               Catch::Contains("you have 3 queued or running: 5 more fit"));
  }
  SECTION("--no-preflight leaves it to sbatch") {
    f.req.preflight = false;
    run_grid_sweep(f.req, f.slurm.ctx, f.out);
    CHECK(f.sbatches() == 1);
  }
  SECTION("once the queue has room, the grid is one array") {
    f.limit(8, 2);
    run_grid_sweep(f.req, f.slurm.ctx, f.out);
    CHECK(f.sbatches() == 1);
    CHECK(f.slurm.runner.count("sbatch", {"--array=0-5"}) == 1);
  }
  SECTION("usage unread: the limit alone, and a note that the queued jobs were not counted") {
    f.answer("scontrol", {"show", "assoc_mgr"}, exits(1, "", "assoc_mgr: Access denied"));
    run_grid_sweep(f.req, f.slurm.ctx, f.out);
    CHECK(f.sbatches() == 1);
    bool noted = false;
    for (const auto& n : f.out.notes)
      noted = noted || n.find("QOS normal allows 8 submitted jobs (MaxSubmitJobsPerUser): the 6 cells fit it, but the "
                              "jobs already queued there were not counted") != std::string::npos;
    CHECK(noted);
  }
}

TEST_CASE("sweep retry over the user's submit limit: refused before any sbatch, naming the limit") {
  GridFixture f(6, 100, 0);
  // The sweep's sbatch was refused: every cell is still to submit.
  f.slurm.sbatch = test::FakeSlurm::Sbatch::Rejects;
  CHECK_FALSE(test::user_error_of([&] { run_grid_sweep(f.req, f.slurm.ctx, f.out); }).empty());
  REQUIRE(f.sbatches() == 1);
  f.slurm.sbatch = test::FakeSlurm::Sbatch::Ok;
  f.limit(8, 4);
  RetryRequest retry;
  retry.sweep = "grid";
  retry.runs_root = f.req.runs_root;
  std::string err = test::user_error_of([&] { retry_grid_cells(retry, f.slurm.ctx, f.out); });
  CHECK_THAT(err, Catch::Contains("the retry's 6 cells are 6 jobs to Slurm; QOS normal allows you 8 submitted jobs "
                                  "(MaxSubmitJobsPerUser) and you have 4 queued or running: 4 more fit") &&
                  Catch::Contains("retry fewer cells at once (--cells)"));
  CHECK(f.sbatches() == 1);
  SECTION("four cells fit") {
    retry.cells = {"SEED=0", "SEED=1", "SEED=2", "SEED=3"};
    retry_grid_cells(retry, f.slurm.ctx, f.out);
    CHECK(f.sbatches() == 2);
    CHECK(f.slurm.runner.count("sbatch", {"--array=0-3"}) == 1);
  }
}

TEST_CASE("submit limits of a sweep: a grid's arrays at once, a raced grid's race and the rest on each possible winner") {
  GridArray a{"1x1", "a.array.sbatch", {0, 1, 2, 3}, nullptr, nullptr, "cells", ""};
  GridArray b{"2x1", "b.array.sbatch", {0, 1, 2, 3}, nullptr, nullptr, "cells", ""};
  auto shown = [](const std::vector<std::vector<GridArray>>& cases) {
    std::vector<std::string> out;
    for (const auto& c : cases) {
      std::vector<std::string> arrays;
      for (const auto& g : c) arrays.push_back(g.label + ":" + std::to_string(g.cells.size()));
      out.push_back(join(arrays, " "));
    }
    return out;
  };
  SECTION("a grid: its arrays, as they are") {
    a.cells = {0, 2};
    b.cells = {1, 3};
    CHECK(shown(grid_submit_cases({a, b}, false, 4)) == std::vector<std::string>{"1x1:2 2x1:2"});
  }
  SECTION("a raced grid: every shape's one task of cell 0, and the other cells on one winner") {
    std::vector<std::vector<GridArray>> cases = grid_submit_cases({a, b}, true, 4);
    CHECK(shown(cases) == std::vector<std::string>{"1x1:1 2x1:1 1x1:3", "1x1:1 2x1:1 2x1:3"});
    CHECK(cases[1].back().cells == std::vector<int>{1, 2, 3});
  }
  SECTION("a raced grid of one cell: the race alone") {
    CHECK(shown(grid_submit_cases({a, b}, true, 1)) == std::vector<std::string>{"1x1:1 2x1:1", "1x1:1 2x1:1"});
  }
}
