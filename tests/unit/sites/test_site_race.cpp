// A race across sites, the coordinator's side (site_race.cpp, coordinate.cpp,
// sites_submit.cpp; docs/race.md "Across sites"): which job is granted, what
// each site is told, when the race is over, and that the grant is recorded
// here, once, before any site hears of it.
#include "catch.hpp"

#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <sstream>

#include "fake_runner.hpp"
#include "fake_sites.hpp"
#include "helpers.hpp"
#include "base/files.hpp"
#include "spec/spec.hpp"
#include "sites/coordinate.hpp"
#include "sites/site_answer.hpp"
#include "sites/site_race.hpp"
#include "runs/site_records.hpp"
#include "sites/sites_submit.hpp"

using namespace ddpctl;
namespace fs = std::filesystem;

namespace {

RaceEvent gate_at(const std::string& job, double t) { return {job, "1x4", t, 0}; }

SitePoll polled(const std::string& name, std::vector<SiteJob> jobs, std::vector<RaceEvent> gate = {}) {
  SitePoll p;
  p.name = name;
  p.reached = true;
  p.submitted = true;
  p.submission_ended = true;
  p.run = name + "-run";
  p.jobs = std::move(jobs);
  p.at_gate = std::move(gate);
  return p;
}

SiteJob job_running(const std::string& id) { return {id, "1x4", "RUNNING", "None", false}; }
SiteJob job_pending(const std::string& id) { return {id, "1x4", "PENDING", "Priority", false}; }
SiteJob job_cancelled(const std::string& id) { return {id, "1x4", "CANCELLED", "None", true}; }

}  // namespace

TEST_CASE("no job at a gate: nothing is granted and nobody is told anything") {
  SiteDecision d = decide_sites({polled("a", {job_pending("1")}), polled("b", {job_pending("7")})}, std::nullopt, 100);
  CHECK_FALSE(d.new_grant);
  CHECK(d.actions.empty());
  CHECK_FALSE(d.done);
}

TEST_CASE("the first job waiting at a gate is granted, and the other site stands down") {
  SiteDecision d = decide_sites({polled("a", {job_running("1")}, {gate_at("1", 50)}), polled("b", {job_running("7")}, {gate_at("7", 40)})},
                                std::nullopt, 100);
  REQUIRE(d.new_grant);
  CHECK(d.new_grant->site == "b");
  CHECK(d.new_grant->job == "7");
  CHECK(d.actions["b"].grant == "7");
  CHECK(d.actions["b"].stand_down.empty());
  CHECK(d.actions["a"].stand_down == "b 7 100.000");
  CHECK(d.actions["a"].grant.empty());
  CHECK_FALSE(d.done);
}

TEST_CASE("a job waiting now goes before one that stood down held, however early that one came") {
  SitePoll a = polled("a", {job_pending("1")}, {gate_at("1", 10)});
  a.timeouts = {gate_at("1", 20)};
  SiteDecision d = decide_sites({a, polled("b", {job_running("7")}, {gate_at("7", 90)})}, std::nullopt, 100);
  REQUIRE(d.new_grant);
  CHECK(d.new_grant->job == "7");
  SECTION("with nobody else, the held one is granted (its site releases it)") {
    SiteDecision only = decide_sites({a, polled("b", {job_pending("7")})}, std::nullopt, 100);
    REQUIRE(only.new_grant);
    CHECK(only.new_grant->job == "1");
    CHECK(only.actions["a"].grant == "1");
  }
}

TEST_CASE("a job that left the gate ended, or a site already told, is not granted") {
  SiteDecision d = decide_sites({polled("a", {job_cancelled("1")}, {gate_at("1", 10)})}, std::nullopt, 100);
  CHECK_FALSE(d.new_grant);
  SitePoll told = polled("a", {job_running("1")}, {gate_at("1", 10)});
  told.stood_down = true;
  CHECK_FALSE(decide_sites({told}, std::nullopt, 100).new_grant);
  SitePoll unreached = polled("a", {job_running("1")}, {gate_at("1", 10)});
  unreached.reached = false;
  CHECK_FALSE(decide_sites({unreached}, std::nullopt, 100).new_grant);
}

TEST_CASE("a recorded grant is what every site is told, until the grantee went through and the others have no job") {
  SiteGrant g{"b", "7", 100};
  SitePoll a = polled("a", {job_pending("1")});
  SitePoll b = polled("b", {job_running("7")}, {gate_at("7", 40)});
  SiteDecision d = decide_sites({a, b}, g, 200);
  CHECK_FALSE(d.new_grant);
  CHECK(d.actions["b"].grant == "7");
  CHECK(d.actions["a"].stand_down == "b 7 100.000");  // the grant's time, not now's
  CHECK_FALSE(d.done);
  SECTION("the grantee went through, the other site stood down with its job cancelled: over") {
    b.passed = {gate_at("7", 45)};
    a.stood_down = true;
    a.jobs = {job_cancelled("1")};
    SiteDecision over = decide_sites({a, b}, g, 300);
    CHECK(over.actions.empty());
    CHECK(over.done);
  }
  SECTION("a site still being submitted to is never taken as done: its jobs may yet come") {
    b.passed = {gate_at("7", 45)};
    SitePoll slow;
    slow.name = "c";
    slow.reached = true;
    SiteDecision d2 = decide_sites({a, b, slow}, g, 300);
    CHECK_FALSE(d2.done);
    CHECK(d2.actions["c"].stand_down == "b 7 100.000");
  }
}

TEST_CASE("with no grant, the race is over once every site's submission ended and no job is left") {
  CHECK(decide_sites({polled("a", {job_cancelled("1")}), polled("b", {})}, std::nullopt, 100).done);
  SitePoll b = polled("b", {});
  b.submission_ended = false;
  CHECK_FALSE(decide_sites({polled("a", {job_cancelled("1")}), b}, std::nullopt, 100).done);
}

TEST_CASE("a site's answer is read, and anything else is said as not the gate's") {
  SitePoll p;
  REQUIRE(read_site_answer(R"({"coordinator":"r","run":"x","jobs":[{"job":"7","label":"1x4","state":"RUNNING","reason":"None","ended":false}],)"
                           R"("at_gate":[{"job":"7","label":"1x4","at":40.5,"attempt":0}],"passed":[],"timeouts":[],)"
                           R"("grant":{"job":"7","site":"h","at":41},"stand_down":"b 1 3"})",
                           p));
  CHECK(p.submitted);
  CHECK(p.run == "x");
  REQUIRE(p.jobs.size() == 1);
  CHECK(p.jobs[0].state == "RUNNING");
  REQUIRE(p.at_gate.size() == 1);
  CHECK(p.at_gate[0].at == 40.5);
  CHECK(p.grant == "7");
  CHECK(p.stood_down);
  SitePoll none;
  REQUIRE(read_site_answer(R"({"coordinator":"r","run":null})", none));
  CHECK_FALSE(none.submitted);
  SitePoll bad;
  CHECK_FALSE(read_site_answer("ddpctl: error: ...", bad));
  CHECK(bad.error == "its answer is not the gate's JSON");
}

namespace {

using test::FakeSites;
using test::has_word;

struct CoordinatorFixture {
  test::TempDir tmp;
  test::FakeClock clock;
  FakeSites sites;
  std::ostringstream log;
  CoordinateRequest req;
  CoordinatorFixture() {
    req.runs_root = tmp.path;
    req.id = "race-1";
    req.poll_s = 5;
    req.max_s = 600;
    fs::create_directories(tmp.path + "/race-1");
    write_file_atomic(tmp.path + "/race-1/sites.json",
                      R"({"sites":[{"name":"a","host":"u@a.org","remote_dir":"","labels":["1x4"]},)"
                      R"({"name":"b","host":"u@b.org","remote_dir":"","labels":["2x4"]}]})");
    for (const char* s : {"a", "b"}) write_file_atomic(tmp.path + "/race-1/site." + s + ".submit.rc", "0\n");
  }
  int run() { return coordinate(req, sites, clock, log); }
};

}  // namespace

TEST_CASE("the coordinator grants the first job at a gate, records it here first, and stands the other site down") {
  CoordinatorFixture f;
  bool a_granted = false, b_stood_down = false;
  std::string grant_when_sent;
  f.sites.answer["a"] = [&](const std::vector<std::string>& w) {
    if (has_word(w, "--grant")) {
      grant_when_sent = read_site_grant(f.tmp.path + "/race-1")->site;  // recorded before it was sent
      a_granted = true;
    }
    return a_granted ? std::string(R"({"coordinator":"race-1","run":"ra","jobs":[{"job":"1","label":"1x4","state":"RUNNING"}],)"
                                   R"("at_gate":[{"job":"1","at":10}],"passed":[{"job":"1","at":11}],"grant":{"job":"1"}})")
                     : std::string(R"({"coordinator":"race-1","run":"ra","jobs":[{"job":"1","label":"1x4","state":"RUNNING"}],)"
                                   R"("at_gate":[{"job":"1","at":10}]})");
  };
  f.sites.answer["b"] = [&](const std::vector<std::string>& w) {
    if (has_word(w, "--stand-down")) b_stood_down = true;
    return b_stood_down ? std::string(R"({"coordinator":"race-1","run":"rb","jobs":[{"job":"7","state":"CANCELLED","ended":true}],"stand_down":"a 1 0"})")
                        : std::string(R"({"coordinator":"race-1","run":"rb","jobs":[{"job":"7","state":"PENDING"}]})");
  };
  REQUIRE(f.run() == 0);
  CHECK(a_granted);
  CHECK(b_stood_down);
  CHECK(grant_when_sent == "a");
  CHECK(fs::exists(f.tmp.path + "/race-1/coordinator.done"));
  CHECK_THAT(read_file(f.tmp.path + "/race-1/coordinator.done"), Catch::Matchers::Contains(R"("job":"1")"));
  CHECK_THAT(f.log.str(), Catch::Matchers::Contains("granted job 1 at site a"));
  // One call per site per poll: two polls (the grant, then the answers that end it).
  CHECK(f.sites.calls_to("a") == 2);
  CHECK(f.sites.calls_to("b") == 2);
}

TEST_CASE("a coordinator started again keeps the grant recorded here, whatever the sites show now") {
  CoordinatorFixture f;
  write_file_atomic(f.tmp.path + "/race-1/grant", "b 7 50.000\n");  // as an earlier version recorded it
  f.req.max_s = 12;
  f.sites.answer["a"] = [](const std::vector<std::string>&) {
    return std::string(R"({"coordinator":"race-1","run":"ra","jobs":[{"job":"1","state":"RUNNING"}],"at_gate":[{"job":"1","at":1}]})");
  };
  f.sites.answer["b"] = [](const std::vector<std::string>&) {
    return std::string(R"({"coordinator":"race-1","run":"rb","jobs":[{"job":"7","state":"PENDING","reason":"JobHeldUser"}],)"
                       R"("at_gate":[{"job":"7","at":40}],"timeouts":[{"job":"7","at":45}]})");
  };
  CHECK(f.run() == 1);  // stopped by --for: b's job is held, not yet through
  for (const auto& [name, words] : f.sites.asked) {
    if (name == "a") CHECK_FALSE(has_word(words, "--grant"));
    if (name == "b") CHECK_FALSE(has_word(words, "--stand-down"));
  }
  CHECK(read_file(f.tmp.path + "/race-1/grant") == "b 7 50.000\n");
  CHECK(read_site_grant(f.tmp.path + "/race-1")->job == "7");
}

TEST_CASE("a site that cannot be reached is asked again each poll and never granted, and the other goes on") {
  CoordinatorFixture f;
  f.req.max_s = 20;
  f.sites.answer["a"] = [](const std::vector<std::string>&) {
    return std::string(R"({"coordinator":"race-1","run":"ra","jobs":[{"job":"1","state":"PENDING"}]})");
  };
  CHECK(f.run() == 1);
  CHECK(f.sites.calls_to("b") >= 4);
  CHECK_THAT(f.log.str(), Catch::Matchers::Contains("site b: not reached: ssh: connection refused"));
  CHECK_FALSE(fs::exists(f.tmp.path + "/race-1/grant"));
}

TEST_CASE("each site is submitted to through this ddpctl's --on, with its site, the coordinator and the gate") {
  RunSpec spec = parse_run_spec("r.yaml", "name: r\ncluster: a\ngpus_per_node: 1\ncommand: 'true'\non: u@a.org\n"
                                          "alternatives:\n  - {on: u@b.org, remote_dir: /p, nodes: 2}\n");
  std::vector<SiteOfRace> sites = sites_of(spec);
  REQUIRE(sites.size() == 2);
  CHECK(sites[0].name == "a.org");
  CHECK(sites[0].labels == std::vector<std::string>{"1x1"});
  CHECK(sites[1].remote_dir == "/p");
  SitesSubmitRequest req;
  req.spec = "r.yaml";
  req.sets = {"trainer.epochs=2"};
  req.self = "/opt/ddpctl";
  req.gate_s = 120;
  CHECK(site_submit_argv(req, sites[1], "r-1") ==
        std::vector<std::string>{"/opt/ddpctl", "submit", "r.yaml", "--site", "u@b.org", "--coordinator", "r-1",
                                 "--gate-timeout", "120", "--set", "trainer.epochs=2", "--on", "u@b.org",
                                 "--remote-dir", "/p"});
  // A grid: each site sweeps its part (its first cell raced, gated).
  req.verb = "sweep";
  CHECK(site_submit_argv(req, sites[1], "r-1")[1] == "sweep");
  std::vector<std::string> start = coordinator_start_argv("/opt/ddpctl", "/h/runs", "r-1", "/h/runs/r-1/c.log");
  CHECK(start[0] == "sh");
  CHECK_THAT(start[2], Catch::Matchers::Contains("setsid -f"));
  CHECK(std::vector<std::string>(start.begin() + 3, start.end()) ==
        std::vector<std::string>{"/opt/ddpctl", "r-1", "/h/runs", "/h/runs/r-1/c.log"});
}

TEST_CASE("a site whose submission failed and that cannot be reached is left out, not waited for") {
  SitePoll gone;
  gone.name = "c";
  gone.submission_ended = true;
  gone.submission_failed = true;
  gone.error = "ssh: connection refused";
  SitePoll b = polled("b", {job_running("7")}, {gate_at("7", 40)});
  b.passed = {gate_at("7", 41)};
  SiteDecision d = decide_sites({polled("a", {job_cancelled("1")}), b, gone}, SiteGrant{"b", "7", 40}, 100);
  CHECK(d.done == false);  // a is not yet told
  SitePoll a = polled("a", {job_cancelled("1")});
  a.stood_down = true;
  CHECK(decide_sites({a, b, gone}, SiteGrant{"b", "7", 40}, 100).done);
  SECTION("but a site that cannot be reached now whose submission went through is waited for") {
    gone.submission_failed = false;
    CHECK_FALSE(decide_sites({a, b, gone}, SiteGrant{"b", "7", 40}, 100).done);
  }
}

TEST_CASE("a cancelled race grants nothing and stands every site down, the grantee's too, until no job is left") {
  SitePoll a = polled("a", {job_running("1")}, {gate_at("1", 10)});
  a.passed = {gate_at("1", 11)};
  SitePoll b = polled("b", {job_pending("7")});
  SiteDecision d = cancel_sites({a, b}, "cancelled 2026-11-29T08:00:00Z");
  CHECK_FALSE(d.new_grant);
  CHECK(d.actions["a"].stand_down == "cancelled 2026-11-29T08:00:00Z");
  CHECK(d.actions["b"].stand_down == "cancelled 2026-11-29T08:00:00Z");
  CHECK(d.actions["a"].grant.empty());
  CHECK_FALSE(d.done);
  a.stood_down = b.stood_down = true;
  a.jobs = {job_cancelled("1")};
  b.jobs = {job_cancelled("7")};
  CHECK(cancel_sites({a, b}, "x").done);
}

TEST_CASE("cancel of a race across sites is recorded here first, then every site is told at once") {
  CoordinatorFixture f;
  bool recorded_first = false;
  f.sites.answer["a"] = [&](const std::vector<std::string>& w) {
    recorded_first = fs::exists(f.tmp.path + "/race-1/cancelled");
    CHECK(has_word(w, "--stand-down"));
    return std::string(R"({"coordinator":"race-1","run":"ra","jobs":[{"job":"1","state":"RUNNING"}],"cancelled":["1"]})");
  };
  std::vector<std::string> said;
  CHECK(cancel_site_race(f.tmp.path + "/race-1", f.sites, said) == 1);  // b cannot be reached
  CHECK(recorded_first);
  REQUIRE(said.size() == 2);
  CHECK(said[0] == "site a: run ra stood down; cancelled job 1");
  CHECK_THAT(said[1], Catch::Matchers::StartsWith("site b: not reached (ssh: connection refused)"));
  SECTION("the coordinator then grants nothing, and stands the sites down until no job is left") {
    f.req.max_s = 6;
    f.sites.answer["a"] = [&](const std::vector<std::string>&) {
      return std::string(R"({"coordinator":"race-1","run":"ra","jobs":[{"job":"1","state":"RUNNING"}],"at_gate":[{"job":"1","at":1}]})");
    };
    f.sites.asked.clear();
    f.run();
    CHECK_FALSE(fs::exists(f.tmp.path + "/race-1/grant"));
    size_t told = 0;
    for (const auto& [name, words] : f.sites.asked) {
      CHECK_FALSE(has_word(words, "--grant"));
      if (name == "a" && has_word(words, "--stand-down")) ++told;
    }
    CHECK(told >= 1);
  }
}

TEST_CASE("a site that answers with wrong types is not reached, and the other site is granted all the same") {
  CoordinatorFixture f;
  bool b_granted = false;
  f.sites.answer["a"] = [](const std::vector<std::string>&) {
    return std::string(R"({"coordinator":"race-1","run":"ra","jobs":[1],"at_gate":[{"job":"1","at":"soon"}]})");
  };
  f.sites.answer["b"] = [&](const std::vector<std::string>& w) {
    if (has_word(w, "--grant")) b_granted = true;
    return std::string(R"({"coordinator":"race-1","run":"rb","jobs":[{"job":"7","label":"2x4","state":"RUNNING"}],)"
                       R"("at_gate":[{"job":"7","at":40}])") +
           (b_granted ? R"(,"passed":[{"job":"7","at":41}],"grant":{"job":"7"}})" : "}");
  };
  f.req.max_s = 60;
  f.run();
  INFO(f.log.str());
  CHECK(b_granted);
  CHECK(read_site_grant(f.tmp.path + "/race-1")->site == "b");
  CHECK_THAT(f.log.str(), Catch::Matchers::Contains("site a: not reached: its answer's jobs[0] is a number, not an object"));
  SECTION("cancel tells every site, past the one that answers so") {
    std::vector<std::string> said;
    CHECK(cancel_site_race(f.tmp.path + "/race-1", f.sites, said) == 1);
    REQUIRE(said.size() == 2);
    CHECK_THAT(said[0], Catch::Matchers::StartsWith("site a: not reached (its answer's jobs[0] is a number"));
    CHECK_THAT(said[1], Catch::Matchers::StartsWith("site b: run rb stood down"));
  }
}

TEST_CASE("a site that never answers holds no other site's grant back: asked at once, each on its own") {
  CoordinatorFixture f;
  f.req.poll_s = 0.2;  // real seconds here: the hung call is waited for at most this long per poll
  f.req.max_s = 600;
  std::mutex m;
  std::condition_variable cv;
  bool released = false, b_granted = false;
  int b_polls_before_grant = 0;
  // Site a hangs (as an ssh call that never ends would, until its own
  // deadline) until site b's job is granted.
  f.sites.unlocked.insert("a");
  f.sites.answer["a"] = [&](const std::vector<std::string>&) {
    std::unique_lock<std::mutex> hold(m);
    cv.wait(hold, [&] { return released; });
    return std::string(R"({"coordinator":"race-1","run":"ra","jobs":[{"job":"1","state":"CANCELLED","ended":true}],)"
                       R"("stand_down":"b 7 0"})");
  };
  f.sites.answer["b"] = [&](const std::vector<std::string>& w) {
    if (has_word(w, "--grant")) {
      b_granted = true;
      std::lock_guard<std::mutex> hold(m);
      released = true;
      cv.notify_all();
    } else if (!b_granted) {
      ++b_polls_before_grant;
    }
    return std::string(R"({"coordinator":"race-1","run":"rb","jobs":[{"job":"7","label":"2x4","state":"RUNNING"}],)"
                       R"("at_gate":[{"job":"7","at":40}])") +
           (b_granted ? R"(,"passed":[{"job":"7","at":41}],"grant":{"job":"7"}})" : "}");
  };
  CHECK(f.run() == 0);
  INFO(f.log.str());
  CHECK(b_granted);
  // Its first answer showed the job at its gate: granted at the next call.
  CHECK(b_polls_before_grant == 1);
  CHECK(f.sites.calls_to("a") <= 2);  // the hung call, and the next once it answered
  // A call in flight for less than 10 s is a slow answer, not said in the log.
  CHECK_THAT(f.log.str(), !Catch::Matchers::Contains("site a: not reached"));
}
