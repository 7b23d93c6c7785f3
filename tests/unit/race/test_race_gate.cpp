// A race across sites, one site's side (race_gate.cpp, explain/race_gate.cpp;
// docs/race.md "Across sites"): its run holds only its shapes and a gate
// naming the coordinator, and `race-gate` grants (once, ever), stands down
// (cancelling what is left there) and answers what it sees.
#include "catch.hpp"

#include <filesystem>

#include "fake_runner.hpp"
#include "fixtures.hpp"
#include "helpers.hpp"
#include "runs/race_gate_files.hpp"
#include "race/race_gate.hpp"
#include "race/race_submit.hpp"

using namespace ddpctl;
namespace fs = std::filesystem;

namespace {

struct GateSiteFixture {
  test::TempDir tmp;
  test::FakeSlurm slurm;
  RaceRequest req;
  test::RecordingOutput out;
  GateSiteFixture() {
    req.specs = {test::write_one_shape_spec(tmp.path, "race",
                                            "on: u@a.org\nalternatives:\n  - {nodes: 2, label: a-2x1}\n"
                                            "  - {on: u@b.org, partition: a100-80gb, label: b-1x1}\n")};
    req.runs_root = tmp.path + "/runs";
    req.templates_dir = test::source_dir() + "/templates";
    req.across = {"u@a.org", "race-20261129T000000Z-abcdef", 120};
    slurm.runner.on("scontrol", {"release"}, test::exits(0));
  }
  Run submit() {
    RaceSubmission r = submit_race(load_race_group(req.specs, req.sets, req.across), req, slurm.ctx, out);
    REQUIRE(r.kind == RaceSubmission::Kind::Submitted);
    return r.run;
  }
  nlohmann::json gate(const std::string& grant = "", const std::string& stand_down = "") {
    RaceGateRequest g;
    g.runs_root = req.runs_root;
    g.coordinator = req.across.coordinator;
    g.grant = grant;
    g.stand_down = stand_down;
    return race_gate(g, slurm.ctx);
  }
};

void waits_at_gate(const Run& run, const std::string& job, const std::string& label) {
  write_file_atomic(gate_dir(run) + "/at." + job, job + " " + label + " 1795300010.5 0\n");
}

}  // namespace

TEST_CASE("a site submits only its own shapes, each script waiting at the gate for the coordinator") {
  GateSiteFixture f;
  Run run = f.submit();
  RaceState race = read_race(run);
  CHECK(race.job_of_label() == std::map<std::string, std::string>{{"1x1", "100"}, {"a-2x1", "101"}});
  GateState g = read_gate(run);
  REQUIRE(g.is_gate);
  CHECK(g.coordinator == "race-20261129T000000Z-abcdef");
  CHECK(g.site == "u@a.org");
  CHECK(g.gate_s == 120);
  std::string script = read_file(run.dir + "/" + run.shapes.at(0).script);
  CHECK_THAT(script, Catch::Matchers::Contains("waits at the gate for the coordinator's grant (at most 120 s)"));
  SECTION("submitting it again at that site makes nothing new") {
    RaceSubmission again = submit_race(load_race_group(f.req.specs, f.req.sets, f.req.across), f.req, f.slurm.ctx, f.out);
    CHECK(again.kind == RaceSubmission::Kind::AlreadySubmitted);
  }
}

TEST_CASE("a site with one shape of the race still races, through its gate") {
  GateSiteFixture f;
  f.req.across.site = "u@b.org";
  Run run = f.submit();
  CHECK(read_race(run).job_of_label() == std::map<std::string, std::string>{{"b-1x1", "100"}});
  CHECK(read_gate(run).is_gate);
}

TEST_CASE("race-gate says the site's run, its jobs and who waits at its gate") {
  GateSiteFixture f;
  CHECK(f.gate()["run"].is_null());  // not submitted yet
  Run run = f.submit();
  f.slurm.job("100")->state = "RUNNING";
  waits_at_gate(run, "100", "1x1");
  nlohmann::json j = f.gate();
  CHECK(j["run"] == run.id);
  REQUIRE(j["jobs"].size() == 2);
  CHECK(j["jobs"][0]["state"] == "RUNNING");
  REQUIRE(j["at_gate"].size() == 1);
  CHECK(j["at_gate"][0]["job"] == "100");
  CHECK_FALSE(j.contains("grant"));
}

TEST_CASE("a grant is written once: a second, for another job, is refused and the first stands") {
  GateSiteFixture f;
  Run run = f.submit();
  f.slurm.job("100")->state = "RUNNING";
  waits_at_gate(run, "100", "1x1");
  nlohmann::json j = f.gate("100");
  CHECK(j["grant"]["job"] == "100");
  CHECK_FALSE(j.contains("error"));
  CHECK_THAT(read_file(gate_dir(run) + "/grant"), Catch::Matchers::StartsWith("100 u@a.org "));
  nlohmann::json again = f.gate("101");
  CHECK(again["grant"]["job"] == "100");
  CHECK(again["error"] == "the gate here already granted job 100");
  CHECK(f.slurm.runner.count("scontrol", {"release"}) == 0);  // nobody stood down held
}

TEST_CASE("a granted job that stood down held for want of a grant in time is released") {
  GateSiteFixture f;
  Run run = f.submit();
  waits_at_gate(run, "100", "1x1");
  write_file_atomic(gate_dir(run) + "/timeout.100", "100 1x1 1795300130.0 0\n");
  f.slurm.job("100")->reason = "JobHeldUser";
  nlohmann::json j = f.gate("100");
  CHECK(j["released"] == true);
  CHECK(f.slurm.runner.count("scontrol", {"release", "100"}) == 1);
}

TEST_CASE("standing down cancels every job of the run still there and says who won") {
  GateSiteFixture f;
  Run run = f.submit();
  f.slurm.job("101")->state = "RUNNING";
  waits_at_gate(run, "101", "a-2x1");
  nlohmann::json j = f.gate("", "b 7 1795300100.000");
  CHECK(j["stand_down"] == "b 7 1795300100.000");
  CHECK(f.slurm.runner.count("scancel", {"100"}) == 1);
  CHECK(f.slurm.runner.count("scancel", {"101"}) == 1);
  CHECK(fs::exists(race_dir(run) + "/cancelled.100"));
  CHECK_FALSE(read_gate(run).grant);
}

namespace {

// A gate as one call reads it: job 11 (1x4) waited and stood down held,
// job 12 (2x1) runs, job 13 ended.
GateView gate_view() {
  GateView v;
  v.gate.is_gate = true;
  v.gate.round = 2;
  v.gate.round_dir = "/r/race/gate/round.2";
  v.gate.timeouts = {{"11", "1x4", 100, 0}};
  v.jobs = {{"11", "1x4"}, {"12", "2x1"}, {"13", "2x2"}};
  Job held;
  held.state = JobState::Pending;
  Job running;
  running.state = JobState::Running;
  Job done;
  done.state = JobState::Completed;
  v.states.jobs = {{"11", held}, {"12", running}, {"13", done}};
  return v;
}

}  // namespace

TEST_CASE("the gate's decision, from its state alone: one verb a call") {
  GateView v = gate_view();
  RaceGateRequest req;
  SECTION("a grant of a job held for want of one: written, and the job released") {
    req.grant = "11";
    GatePlan p = decide_gate(v, req);
    CHECK(p.error.empty());
    CHECK(p.grant == "11");
    CHECK(p.release);
  }
  SECTION("a grant of a running job: written, nothing to release") {
    req.grant = "12";
    CHECK_FALSE(decide_gate(v, req).release);
  }
  SECTION("a grant for another round, or of a job not of this run: refused, nothing written") {
    req.grant = "12";
    req.round = 1;
    CHECK(decide_gate(v, req).error == "round 1 is not the newest here (round 2): no grant written");
    req.round = 0;
    req.grant = "999";
    GatePlan p = decide_gate(v, req);
    CHECK(p.error == "no job '999' is of this run here: no grant written");
    CHECK_FALSE(p.grant);
  }
  SECTION("a stand-down cancels every job still queued or running; an older round's does nothing") {
    req.stand_down = "b.org 7 100.000";
    GatePlan p = decide_gate(v, req);
    CHECK(p.stand_down == "b.org 7 100.000");
    CHECK(p.cancel == std::vector<std::string>{"11", "12"});
    req.round = 1;
    GatePlan old = decide_gate(v, req);
    CHECK_FALSE(old.stand_down);
    CHECK(old.cancel.empty());
  }
  SECTION("a round opens once, and at the requeued winner's site only after a job went through") {
    req.open_round = 2;
    CHECK(decide_gate(v, req).open_round == 0);  // there already
    req.open_round = 3;
    CHECK(decide_gate(v, req).error == "round 2 here has no job through its gate: nothing to race again");
    req.resubmit = true;
    GatePlan p = decide_gate(v, req);
    CHECK(p.open_round == 3);
    CHECK(p.resubmit);
  }
  SECTION("two verbs in one call are refused") {
    req.grant = "11";
    req.stand_down = "x";
    CHECK_THROWS_WITH(decide_gate(v, req), Catch::Matchers::Contains("takes one of --grant, --stand-down and --open-round"));
  }
}
