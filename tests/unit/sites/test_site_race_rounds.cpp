// A race across sites raced again when its winner is requeued (site_race.cpp
// decide_rounds, coordinate.cpp, race_checkpoint.cpp; docs/race.md "Across
// sites", "When the winner is requeued"): the winner is watched while it
// trains, a requeue opens the next round at its own site first and only then
// at the others, a grant at another site waits for the checkpoint, and what
// comes in as a checkpoint is data.
#include "catch.hpp"

#include <filesystem>
#include <mutex>
#include <sstream>

#include "fake_runner.hpp"
#include "fake_sites.hpp"
#include "helpers.hpp"
#include "base/diagnostics.hpp"
#include "base/files.hpp"
#include "base/text.hpp"
#include "sites/coordinate.hpp"
#include "sites/site_race.hpp"
#include "runs/site_records.hpp"

using namespace ddpctl;
namespace fs = std::filesystem;

namespace {

SitePoll round_poll(const std::string& name, std::vector<SiteJob> jobs, int round = 1) {
  SitePoll p;
  p.name = name;
  p.reached = true;
  p.submitted = true;
  p.submission_ended = true;
  p.run = name + "-run";
  p.jobs = std::move(jobs);
  p.round = round;
  return p;
}

SiteJob in_state(const std::string& id, const std::string& state, const std::string& reason = "None") {
  return {id, "1x4", state, reason, state == "COMPLETED" || state == "CANCELLED"};
}

RaceEvent event(const std::string& job, double t) { return {job, "1x4", t, 0}; }

// Round 1 won by job 1 at site a, which went through; site b stood down.
struct WonRoundOne {
  SitePoll a = round_poll("a", {in_state("1", "RUNNING")});
  SitePoll b = round_poll("b", {in_state("7", "CANCELLED")});
  RaceRounds rr;
  WonRoundOne() {
    a.at_gate = {event("1", 10)};
    a.passed = {event("1", 11)};
    a.grant = "1";
    b.stood_down = true;
    rr.rounds = 3;
    rr.grant = SiteGrant{"a", "1", 10};
  }
};

}  // namespace

TEST_CASE("a race without requeue: over once its winner went through, as before") {
  WonRoundOne w;
  w.rr.rounds = 1;
  RoundDecision d = decide_rounds({w.a, w.b}, w.rr, 100);
  CHECK(d.sites.done);
  CHECK_FALSE(d.open);
}

TEST_CASE("a winner that may be requeued is watched: its requeue opens round 2 at its site, its run's end ends it") {
  WonRoundOne w;
  RoundDecision training = decide_rounds({w.a, w.b}, w.rr, 100);
  CHECK_FALSE(training.sites.done);
  CHECK_FALSE(training.open);
  CHECK(training.sites.actions.empty());

  SECTION("Slurm shows the winner PENDING again: round 2, from site a") {
    w.a.jobs = {in_state("1", "PENDING", "BeginTime")};
    RoundDecision d = decide_rounds({w.a, w.b}, w.rr, 200);
    REQUIRE(d.open);
    CHECK(d.open->round == 2);
    CHECK(d.open->from_site == "a");
    CHECK(d.open->from_job == "1");
    CHECK(d.open->why == "job 1 (shape 1x4) at site a, the winner of round 1, was requeued (PENDING, BeginTime)");
  }
  SECTION("still REQUEUED (its processes may run): not yet") {
    w.a.jobs = {in_state("1", "REQUEUED")};
    CHECK_FALSE(decide_rounds({w.a, w.b}, w.rr, 200).open);
  }
  SECTION("the winner's job ended: the race is over") {
    w.a.jobs = {in_state("1", "COMPLETED")};
    RoundDecision d = decide_rounds({w.a, w.b}, w.rr, 200);
    CHECK(d.sites.done);
    CHECK_FALSE(d.open);
  }
  SECTION("the race had its rounds: over once the winner went through, however it ends") {
    w.rr.rounds = 1;
    CHECK(decide_rounds({w.a, w.b}, w.rr, 200).sites.done);
  }
}

TEST_CASE("round 2 opens at the requeued winner's site first, then at the others, who submit again") {
  WonRoundOne w;
  w.a.jobs = {in_state("1", "PENDING", "BeginTime")};
  w.rr.round = 2;
  w.rr.grant.reset();
  w.rr.why = "job 1 at site a was requeued";
  w.rr.from_site = "a";
  w.rr.checkpoint_site = "a";
  w.rr.relayed = false;
  RoundDecision first = decide_rounds({w.a, w.b}, w.rr, 300);
  REQUIRE(first.sites.actions.count("a"));
  CHECK(first.sites.actions["a"].open_round == 2);
  CHECK_FALSE(first.sites.actions["a"].resubmit);
  CHECK(first.sites.actions.count("b") == 0);  // not before site a opened it
  CHECK_FALSE(first.sites.new_grant);

  SECTION("site a's requeued job started first and granted itself round 2: it goes on, b is not raced") {
    w.a.round = 2;
    w.a.round_opened = "job";
    w.a.grant = "1";
    w.a.passed = {event("1", 290)};
    RoundDecision d = decide_rounds({w.a, w.b}, w.rr, 310);
    REQUIRE(d.sites.new_grant);
    CHECK(d.sites.new_grant->site == "a");
    CHECK(d.sites.new_grant->job == "1");
    CHECK(d.sites.actions.count("b") == 0);
    CHECK_THAT(d.sites.said.front(), Catch::Matchers::Contains("granted itself the round"));
  }
  SECTION("opened by the coordinator at site a: site b opens it too and submits its shapes again") {
    w.a.round = 2;
    w.a.round_opened = "coordinator";
    w.a.grant.reset();
    w.a.at_gate.clear();
    w.a.passed.clear();
    RoundDecision d = decide_rounds({w.a, w.b}, w.rr, 310);
    CHECK_FALSE(d.sites.new_grant);
    REQUIRE(d.sites.actions.count("b"));
    CHECK(d.sites.actions["b"].open_round == 2);
    CHECK(d.sites.actions["b"].resubmit);
    CHECK(d.sites.actions["b"].because == "job 1 at site a was requeued");

    // Site b's new job reaches round 2's gate first: granted, site a stands
    // down; the grant waits for the checkpoint, which goes once a's jobs ended.
    w.b.round = 2;
    w.b.round_opened = "coordinator";
    w.b.stood_down = false;
    w.b.jobs = {in_state("7", "CANCELLED"), in_state("9", "RUNNING")};
    w.b.at_gate = {event("9", 320)};
    RoundDecision g = decide_rounds({w.a, w.b}, w.rr, 330);
    REQUIRE(g.sites.new_grant);
    CHECK(g.sites.new_grant->site == "b");
    CHECK(g.sites.new_grant->job == "9");
    CHECK(g.sites.actions["a"].stand_down == "b 9 330.000");
    CHECK(g.sites.actions["a"].round == 2);
    CHECK(g.sites.actions["b"].grant.empty());
    CHECK_FALSE(g.relay);  // job 1 is still queued at site a

    w.rr.grant = g.sites.new_grant;
    w.a.jobs = {in_state("1", "CANCELLED")};
    w.a.stood_down = true;
    RoundDecision r = decide_rounds({w.a, w.b}, w.rr, 340);
    CHECK(r.relay);
    CHECK(r.sites.actions["b"].grant.empty());

    w.rr.relayed = true;
    RoundDecision sent = decide_rounds({w.a, w.b}, w.rr, 350);
    CHECK(sent.sites.actions["b"].grant == "9");
    CHECK(sent.sites.actions["b"].round == 2);
    CHECK_FALSE(sent.sites.done);
  }
}

namespace {

// Two sites that play a whole re-race: site a's job 1 wins round 1, trains
// and is requeued; site b's job 9, submitted again in round 2, wins it.
struct ReRaceSites : SiteCaller {
  int a_round = 1, b_round = 1, polls = 0;
  bool a_granted = false, b_granted2 = false, a_stood_down2 = false, relayed = false, b_done = false;
  std::vector<std::pair<std::string, std::vector<std::string>>> asked;
  std::vector<std::string> relay_words;
  std::string grant2_when_relayed;
  std::string dir;

  std::mutex mutex;  // calls come from several threads (site_polls.hpp), a relay beside them

  static bool has(const std::vector<std::string>& w, const std::string& x) { return test::has_word(w, x); }
  std::string call(const SiteOfRace& site, const std::vector<std::string>& w, std::string&) override {
    std::lock_guard<std::mutex> hold(mutex);
    asked.emplace_back(site.name, w);
    if (site.name == "a") {
      ++polls;
      if (has(w, "--grant") && a_round == 1) a_granted = true;
      if (has(w, "--open-round")) a_round = 2;
      if (has(w, "--stand-down") && a_round == 2) a_stood_down2 = true;
      std::string state = !a_granted ? "RUNNING" : polls < 4 ? "RUNNING" : a_stood_down2 ? "CANCELLED" : "PENDING";
      std::string r1 = R"("at_gate":[{"job":"1","at":10}])" +
                       std::string(a_granted ? R"(,"passed":[{"job":"1","at":11}],"grant":{"job":"1"})" : "");
      std::string body = a_round == 1 ? r1 : std::string(R"("round":2,"round_opened":"coordinator")") +
                                                 (a_stood_down2 ? R"(,"stand_down":"b 9 0")" : "");
      return R"({"coordinator":"race-1","run":"ra","jobs":[{"job":"1","label":"1x4","state":")" + state +
             R"("}],)" + body + "}";
    }
    if (has(w, "--stand-down") && b_round == 1) {
    }
    if (has(w, "--open-round")) {
      CHECK(has(w, "--resubmit"));
      CHECK(a_round == 2);  // site a opened it first
      b_round = 2;
    }
    if (has(w, "--grant")) {
      CHECK(relayed);  // never before the checkpoint is there
      CHECK(has(w, "--round"));
      b_granted2 = true;
    }
    if (b_round == 1)
      return std::string(R"({"coordinator":"race-1","run":"rb","jobs":[{"job":"7","state":"CANCELLED","ended":true}],"stand_down":"a 1 0"})");
    std::string state = b_done ? "COMPLETED" : "RUNNING";
    if (b_granted2) b_done = true;  // trains once through, then completes
    return R"({"coordinator":"race-1","run":"rb","round":2,"round_opened":"coordinator","jobs":[{"job":"7","state":"CANCELLED","ended":true},{"job":"9","label":"2x4","state":")" +
           state + R"("}],"at_gate":[{"job":"9","at":500}])" +
           (b_granted2 ? R"(,"passed":[{"job":"9","at":501}],"grant":{"job":"9"})" : "") + "}";
  }
  bool relay(const SiteOfRace& from, const std::vector<std::string>& from_words, const SiteOfRace& to,
             const std::vector<std::string>& to_words, const std::string&, std::string& answer, std::string&) override {
    std::lock_guard<std::mutex> hold(mutex);
    relay_words = {from.name, from_words.at(0), from_words.back(), to.name, to_words.at(0), to_words.back()};
    grant2_when_relayed = fs::exists(dir + "/grant.2") ? site_round_grant(dir, 2)->site : "";
    relayed = true;
    answer = R"({"folder":"/b/ckpt","files":2,"bytes":10})";
    return true;
  }
};

}  // namespace

TEST_CASE("the coordinator re-races a requeued winner across sites and carries its checkpoint to the new winner") {
  test::TempDir tmp;
  test::FakeClock clock;
  ReRaceSites sites;
  std::ostringstream log;
  fs::create_directories(tmp.path + "/race-1");
  sites.dir = tmp.path + "/race-1";
  write_file_atomic(tmp.path + "/race-1/sites.json",
                    R"({"rounds":2,"sites":[{"name":"a","host":"u@a.org","remote_dir":"","labels":["1x4"]},)"
                    R"({"name":"b","host":"u@b.org","remote_dir":"","labels":["2x4"]}]})");
  for (const char* s : {"a", "b"}) write_file_atomic(tmp.path + "/race-1/site." + s + ".submit.rc", "0\n");
  CoordinateRequest req;
  req.runs_root = tmp.path;
  req.id = "race-1";
  req.poll_s = 5;
  req.max_s = 3600;
  REQUIRE(coordinate(req, sites, clock, log) == 0);
  INFO(log.str());
  CHECK(site_round_grant(tmp.path + "/race-1", 1)->job == "1");
  CHECK(site_round_grant(tmp.path + "/race-1", 1)->site == "a");
  CHECK(site_round_grant(tmp.path + "/race-1", 2)->job == "9");
  CHECK(site_round_grant(tmp.path + "/race-1", 2)->site == "b");
  CHECK_THAT(read_file(tmp.path + "/race-1/round.2"), Catch::Matchers::Contains("the winner of round 1, was requeued"));
  CHECK(sites.relay_words == std::vector<std::string>{"a", "race-checkpoint", "--send", "b", "race-checkpoint", "--receive"});
  CHECK(sites.grant2_when_relayed == "b");  // recorded here before the checkpoint moved
  CHECK(fs::exists(tmp.path + "/race-1/relay.2"));
  CHECK(sites.a_stood_down2);
  CHECK_THAT(read_file(tmp.path + "/race-1/coordinator.done"), Catch::Matchers::Contains(R"("round":2)"));
  CHECK_THAT(read_file(tmp.path + "/race-1/coordinator.done"), Catch::Matchers::Contains(R"("site":"b")"));
  CHECK_THAT(log.str(), Catch::Matchers::Contains("the checkpoint went from site a to site b"));
  CHECK(read_site_grant(tmp.path + "/race-1")->site == "b");  // the newest round's
}
