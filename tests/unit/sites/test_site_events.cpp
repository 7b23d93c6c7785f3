// A race across sites as one stream (sites/site_events.hpp, docs/json.md
// "A race across sites"): the coordinator takes each site's events after
// the last it took and writes them into the race's log, merged in time
// order, before what it decided from the same poll; a coordinator started
// again goes on with no repeat; an event a site sends that is not one is
// that site's bad answer; an older ddpctl that refuses --events-after is
// asked without it.
#include "catch.hpp"

#include <filesystem>
#include <sstream>

#include "fake_runner.hpp"
#include "fake_sites.hpp"
#include "helpers.hpp"
#include "base/files.hpp"
#include "runs/events.hpp"
#include "sites/coordinate.hpp"
#include "sites/site_answer.hpp"

using namespace ddpctl;
namespace fs = std::filesystem;
using test::FakeSites;
using test::has_word;
using test::word_value;

namespace {

struct Race {
  test::TempDir tmp;
  test::FakeClock clock;
  FakeSites sites;
  std::ostringstream log;
  CoordinateRequest req;
  std::string dir = tmp.path + "/race-1";
  Race() {
    req.runs_root = tmp.path;
    req.id = "race-1";
    req.poll_s = 5;
    req.max_s = 600;
    fs::create_directories(dir);
    write_file_atomic(dir + "/sites.json",
                      R"({"sites":[{"name":"a","host":"u@a.org","remote_dir":"","labels":["1x4"]},)"
                      R"({"name":"b","host":"u@b.org","remote_dir":"","labels":["2x4"]}]})");
    for (const char* s : {"a", "b"}) write_file_atomic(dir + "/site." + s + ".submit.rc", "0\n");
  }
  int run() { return coordinate(req, sites, clock, log); }
  std::vector<nlohmann::json> events() { return read_events(dir, 0).events; }
};

std::string ev(long long seq, double t, const std::string& type, const std::string& job) {
  return nlohmann::json({{"schema", "ddpctl.event/1"}, {"seq", seq}, {"t", t}, {"time", "x"}, {"type", type},
                         {"run", "r"}, {"job", job}})
      .dump();
}

// A site's events after --events-after, as race-gate answers them.
std::string events_after(const std::vector<std::string>& words, const std::vector<std::string>& log) {
  const long long after = std::stoll(word_value(words, "--events-after"));
  std::string out = "[";
  for (size_t i = 0; i < log.size(); ++i)
    if (static_cast<long long>(i + 1) > after) out += (out.size() > 1 ? "," : "") + log[i];
  return out + "]";
}

}  // namespace

TEST_CASE("the sites' events come into the race's log in time order, before the grant they led to, then the race's end") {
  Race f;
  bool granted = false, stood_down = false;
  std::vector<std::string> a_log = {ev(1, 100, "submitted", "1"), ev(2, 104, "race_won", "1")};
  std::vector<std::string> b_log = {ev(1, 101, "submitted", "7"), ev(2, 106, "race_won", "7")};
  f.sites.answer["a"] = [&](const std::vector<std::string>& w) {
    REQUIRE(has_word(w, "--events-after"));
    if (has_word(w, "--grant")) {
      granted = true;
      a_log.push_back(ev(3, 120, "started", "1"));
    }
    std::string state = granted ? R"("jobs":[{"job":"1","label":"1x4","state":"RUNNING"}],"at_gate":[{"job":"1","at":104}],)"
                                  R"("passed":[{"job":"1","at":121}],"grant":{"job":"1"})"
                                : R"("jobs":[{"job":"1","label":"1x4","state":"RUNNING"}],"at_gate":[{"job":"1","at":104}])";
    return R"({"coordinator":"race-1","run":"ra",)" + state + R"(,"events":)" + events_after(w, a_log) + "}";
  };
  f.sites.answer["b"] = [&](const std::vector<std::string>& w) {
    if (has_word(w, "--stand-down")) {
      stood_down = true;
      b_log.push_back(ev(3, 125, "race_lost", "7"));
      b_log.push_back(ev(4, 126, "run_ended", ""));
    }
    std::string state = stood_down ? R"("jobs":[{"job":"7","state":"CANCELLED","ended":true}],"stand_down":"a 1 0")"
                                   : R"("jobs":[{"job":"7","state":"RUNNING"}],"at_gate":[{"job":"7","at":106}])";
    return R"({"coordinator":"race-1","run":"rb",)" + state + R"(,"events":)" + events_after(w, b_log) + "}";
  };
  REQUIRE(f.run() == 0);
  std::vector<std::string> got;
  for (const auto& e : f.events())
    got.push_back(e["type"].get<std::string>() + ":" + e.value("site", "") + ":" + std::to_string(e.value("site_seq", 0)));
  INFO(f.log.str());
  CHECK(got == std::vector<std::string>{"submitted:a:1", "submitted:b:1", "race_won:a:2", "race_won:b:2", "granted:a:0",
                                        "stood_down:b:0", "started:a:3", "race_lost:b:3", "run_ended::0"});
  const auto e = f.events();
  CHECK(e[0]["site_run"] == "ra");
  CHECK(e[0]["run"] == "race-1");
  CHECK(e[0]["site_t"] == 100.0);
  CHECK(e[0]["seq"] == 1);

  SECTION("a coordinator started again asks each site after the last it took, and writes nothing twice") {
    fs::remove(f.dir + "/coordinator.done");
    f.sites.asked.clear();
    f.req.max_s = 1;
    f.run();
    bool asked_a = false;
    for (const auto& call : f.sites.asked) {
      if (call.first != "a") continue;
      asked_a = true;
      CHECK(word_value(call.second, "--events-after") == "3");
    }
    CHECK(asked_a);
    CHECK(f.events().size() == got.size());
  }
}

TEST_CASE("a site's event that is not one makes its answer bad, and an older ddpctl without --events-after is asked without it") {
  SitePoll p;
  p.name = "a";
  const std::string head = R"({"coordinator":"race-1","run":"ra","jobs":[],"events":)";
  CHECK(read_site_answer(head + "[" + ev(1, 1, "started", "1") + "]}", p));
  CHECK(p.events.size() == 1);
  for (const std::string& bad : {std::string(R"([{"seq":1,"t":1,"type":"no_such"}])"),
                                 std::string(R"([{"seq":"1","t":1,"type":"started"}])"),
                                 std::string(R"([{"seq":2,"t":1,"type":"started"},{"seq":1,"t":2,"type":"started"}])"),
                                 std::string(R"([{"seq":1,"type":"started"}])"), std::string(R"([5])"),
                                 std::string(R"({"seq":1})"),
                                 R"([{"seq":1,"t":1,"type":"started","pad":")" + std::string(20000, 'x') + R"("}])"}) {
    SitePoll q;
    q.name = "a";
    INFO(bad.substr(0, 80));
    CHECK_FALSE(read_site_answer(head + bad + "}", q));
    CHECK_THAT(q.error, Catch::Matchers::Contains("events"));
  }

  Race f;
  f.req.max_s = 12;
  f.sites.answer["a"] = [](const std::vector<std::string>&) {
    return std::string(R"({"coordinator":"race-1","run":"ra","jobs":[{"job":"1","state":"PENDING"}]})");
  };
  // A site whose ddpctl is older: its CLI refuses the option, as CLI11 says it.
  struct Older : FakeSites {
    std::string call(const SiteOfRace& site, const std::vector<std::string>& words, std::string& error) override {
      if (has_word(words, "--events-after")) {
        std::lock_guard<std::recursive_mutex> hold(mutex);
        asked.emplace_back(site.name, words);
        error = "The following argument was not expected: --events-after=0\nRun with --help for more information.";
        return "";
      }
      return FakeSites::call(site, words, error);
    }
  } older;
  older.answer = f.sites.answer;
  older.answer["b"] = older.answer["a"];
  CHECK(coordinate(f.req, older, f.clock, f.log) == 1);
  CHECK_THAT(f.log.str(), Catch::Matchers::Contains("site a: its ddpctl does not send its run's events (an older version)"));
  size_t without = 0;
  for (const auto& [name, words] : older.asked) without += name == "a" && !has_word(words, "--events-after");
  CHECK(without >= 1);
  CHECK_THAT(f.log.str(), Catch::Matchers::Contains("site a: run ra: job 1 () PENDING"));
}
