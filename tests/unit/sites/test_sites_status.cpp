// `ddpctl status RUN` of a race across sites (sites_status.cpp): the race's
// row, then every site's jobs with what each is doing at its gate, from one
// read-only call per site; a site not reached says why.
#include "catch.hpp"

#include <filesystem>
#include <mutex>

#include "helpers.hpp"
#include "base/diagnostics.hpp"
#include "base/files.hpp"
#include "sites/sites_status.hpp"

using namespace ddpctl;
namespace fs = std::filesystem;

namespace {

struct SiteRaceStatusSites : SiteCaller {
  std::map<std::string, std::string> answers;
  std::vector<std::vector<std::string>> asked;
  std::mutex mutex;  // sites are asked at once (site_polls.hpp)
  std::string call(const SiteOfRace& site, const std::vector<std::string>& words, std::string& error) override {
    std::lock_guard<std::mutex> hold(mutex);
    asked.push_back(words);
    auto it = answers.find(site.name);
    if (it == answers.end()) error = "ssh: connect to host a.org port 22: Connection refused";
    return it == answers.end() ? "" : it->second;
  }
};

struct SiteRaceStatusFixture {
  test::TempDir tmp;
  std::string dir;
  SiteRaceStatusSites sites;
  SiteRaceStatusFixture() {
    dir = tmp.path + "/race-20261129T000000Z-abc123";
    fs::create_directories(dir);
    write_file_atomic(dir + "/sites.json",
                      R"({"sites":[{"name":"a.org","host":"u@a.org","remote_dir":"","labels":["1x4"]},)"
                      R"({"name":"b.org","host":"u@b.org","remote_dir":"","labels":["2x4"]}]})");
    write_file_atomic(dir + "/site.a.org.submit.rc", "0\n");
    write_file_atomic(dir + "/site.b.org.submit.rc", "0\n");
  }
  std::string row(size_t i) {
    auto rows = site_race_rows(dir, sites);
    REQUIRE(rows.size() > i);
    const SiteRow& r = rows[i];
    return r.site + " " + r.job + " " + r.shape + " " + r.state + " " + r.info;
  }
};

}  // namespace

TEST_CASE("a race across sites is found by its id or a prefix, and only such a run") {
  SiteRaceStatusFixture f;
  CHECK(find_site_race(f.tmp.path, "race-20261129T000000Z-abc123") == f.dir);
  CHECK(find_site_race(f.tmp.path, "race-2026") == f.dir);
  CHECK_FALSE(find_site_race(f.tmp.path, "other"));
  fs::create_directories(f.tmp.path + "/race-plain");
  CHECK_FALSE(find_site_race(f.tmp.path, "race-plain"));
  // A prefix a plain run shares stays the plain run's; the whole id still names the race.
  fs::create_directories(f.tmp.path + "/race-20261129T010000Z-def456");
  write_file_atomic(f.tmp.path + "/race-20261129T010000Z-def456/run.json", "{}\n");
  CHECK_FALSE(find_site_race(f.tmp.path, "race-2026"));
  CHECK(find_site_race(f.tmp.path, "race-20261129T000000Z-abc123") == f.dir);
}

TEST_CASE("status of a race across sites: who won, who trains, who stood down, and a site not reached") {
  SiteRaceStatusFixture f;
  write_file_atomic(f.dir + "/grant", "a.org 12 1795300040.000\n");
  f.sites.answers["a.org"] =
      R"({"coordinator":"x","run":"ra","jobs":[{"job":"12","label":"1x4","state":"RUNNING","reason":"None"}],)"
      R"("at_gate":[{"job":"12","at":1795300030}],"passed":[{"job":"12","at":1795300043}],"grant":{"job":"12"}})";
  CHECK(f.row(0) == "- - race WON won by job 12 at site a.org; no coordinator runs: `ddpctl coordinate "
                    "race-20261129T000000Z-abc123` runs it");
  CHECK(f.row(1) == "a.org 12 1x4 RUNNING granted: went through its gate after 13 s there and trains");
  CHECK(f.row(2) == "b.org - - UNKNOWN not reached: ssh: connect to host a.org port 22: Connection refused");
  SECTION("the other site stood down: its job is cancelled, naming the winner") {
    f.sites.answers["b.org"] =
        R"({"coordinator":"x","run":"rb","jobs":[{"job":"7","label":"2x4","state":"CANCELLED","ended":true}],)"
        R"("stand_down":"a.org 12 1795300040.000"})";
    CHECK(f.row(2) == "b.org 7 2x4 CANCELLED stood down: site a.org won (job 12)");
  }
  // Reading only: no call carries a grant or a stand-down, and each names its site.
  for (const auto& words : f.sites.asked) {
    CHECK(words.size() == 3);
    CHECK(words[2].rfind("--site=u@", 0) == 0);
  }
}

TEST_CASE("status of a race across sites before any grant: a job at its gate, one held, one waiting") {
  SiteRaceStatusFixture f;
  f.sites.answers["a.org"] =
      R"({"coordinator":"x","run":"ra","jobs":[{"job":"12","label":"1x4","state":"PENDING","reason":"JobHeldUser"}],)"
      R"("at_gate":[{"job":"12","at":1795300030}],"timeouts":[{"job":"12","at":1795300330}]})";
  f.sites.answers["b.org"] =
      R"({"coordinator":"x","run":"rb","jobs":[{"job":"7","label":"2x4","state":"PENDING","reason":"Resources"}]})";
  CHECK_THAT(f.row(0), Catch::Matchers::StartsWith("- - race RACING no job granted yet"));
  CHECK(f.row(1) == "a.org 12 1x4 PENDING stood down held: no grant within its gate time; it trains only if granted");
  CHECK(f.row(2) == "b.org 7 2x4 PENDING waiting: Resources");
  std::vector<std::string> table = format_site_rows("r", site_race_rows(f.dir, f.sites));
  CHECK_THAT(table[0], Catch::Matchers::StartsWith("RUN  SITE   JOB  SHAPE  STATE    INFO"));
}

TEST_CASE("status --watch of a race across sites: done only once every site's jobs ended") {
  SiteRaceStatusFixture f;
  write_file_atomic(f.dir + "/grant", "a.org 12 1795300040.000\n");
  f.sites.answers["a.org"] =
      R"({"coordinator":"x","run":"ra","jobs":[{"job":"12","label":"1x4","state":"RUNNING","reason":"None"}],)"
      R"("at_gate":[{"job":"12","at":1795300030}],"passed":[{"job":"12","at":1795300043}],"grant":{"job":"12"}})";
  f.sites.answers["b.org"] =
      R"({"coordinator":"x","run":"rb","jobs":[{"job":"7","label":"2x4","state":"CANCELLED","ended":true}],)"
      R"("stand_down":"a.org 12 1795300040.000"})";
  StatusFrame running = site_race_frame("r", site_race_rows(f.dir, f.sites));
  CHECK_FALSE(running.all_done);
  REQUIRE(running.keys.size() == 3);
  CHECK(running.lines.size() == 4);  // the header, then a line per key
  CHECK(running.keys[1] == "a.org 12");
  f.sites.answers["a.org"] =
      // Ended by its state, before the site counts it final (squeue still lists it).
      R"({"coordinator":"x","run":"ra","jobs":[{"job":"12","label":"1x4","state":"COMPLETED"}],)"
      R"("at_gate":[{"job":"12","at":1795300030}],"passed":[{"job":"12","at":1795300043}],"grant":{"job":"12"}})";
  StatusFrame over = site_race_frame("r", site_race_rows(f.dir, f.sites));
  CHECK(over.all_done);
  CHECK(over.news[1] != running.news[1]);
  SECTION("a site not reached is not done, unless its submission failed (it was left out)") {
    f.sites.answers.erase("b.org");
    CHECK_FALSE(site_race_frame("r", site_race_rows(f.dir, f.sites)).all_done);
    write_file_atomic(f.dir + "/site.b.org.submit.rc", "255\n");
    CHECK(site_race_frame("r", site_race_rows(f.dir, f.sites)).all_done);
  }
}

TEST_CASE("logs, report and fetch of a race across sites go to the winning site's run") {
  SiteRaceStatusFixture f;
  SECTION("no grant yet: refused, naming status and the per-site command") {
    try {
      winner_site(f.dir, f.sites, "logs");
      FAIL("no error");
    } catch (const UserError& e) {
      CHECK_THAT(e.what(), Catch::Matchers::Contains("no job has won yet") &&
                               Catch::Matchers::Contains("`ddpctl status race-20261129T000000Z-abc123`") &&
                               Catch::Matchers::Contains("`ddpctl logs SITE_RUN --on HOST`"));
    }
    CHECK(f.sites.asked.empty());
  }
  write_file_atomic(f.dir + "/grant", "b.org 7 1795300040.000\n");
  SECTION("the winner's site is asked once, reading only, and names its run") {
    f.sites.answers["b.org"] = R"({"coordinator":"x","run":"rb-20261129T000001Z-aaaaaa","jobs":[]})";
    WinnerSite w = winner_site(f.dir, f.sites, "logs");
    CHECK(w.site.host == "u@b.org");
    CHECK(w.job == "7");
    CHECK(w.run == "rb-20261129T000001Z-aaaaaa");
    REQUIRE(f.sites.asked.size() == 1);
    CHECK(f.sites.asked[0] == std::vector<std::string>{"race-gate", "race-20261129T000000Z-abc123", "--site=u@b.org"});
  }
  SECTION("a site that names a path as its run is not trusted") {
    f.sites.answers["b.org"] = R"({"coordinator":"x","run":"../../etc","jobs":[]})";
    CHECK_THROWS_WITH(winner_site(f.dir, f.sites, "fetch"),
                      Catch::Matchers::Contains("was won by job 7 at site b.org, which did not say its run there") &&
                          Catch::Matchers::Contains("not a run id: '../../etc'"));
  }
  SECTION("the winning site cannot be reached: said, with ssh's words") {
    CHECK_THROWS_WITH(winner_site(f.dir, f.sites, "report"), Catch::Matchers::Contains("Connection refused"));
  }
}

TEST_CASE("status of a re-race whose grant waits for the checkpoint says so, with the relay's last error") {
  SiteRaceStatusFixture f;
  write_file_atomic(f.dir + "/grant", R"({"site":"a.org","job":"12","at":1795300040})");
  write_file_atomic(f.dir + "/round.2", R"({"why":"job 12 was requeued","from_site":"a.org","from_job":"12"})");
  write_file_atomic(f.dir + "/grant.2", R"({"site":"b.org","job":"9","at":1795300400})");
  write_file_atomic(f.dir + "/relay.2.error",
                    "site a.org: its checkpoint was refused: it sent more than the 1.0 MiB it declared\n");
  CHECK_THAT(f.row(0), Catch::Matchers::Contains("round 2 (re-raced: job 12 was requeued): won by job 9 at site b.org; "
                                                 "not sent yet: it waits for the checkpoint to go from site a.org (last "
                                                 "try: site a.org: its checkpoint was refused: it sent more than the 1.0 "
                                                 "MiB it declared)"));
  write_file_atomic(f.dir + "/relay.2", "{}\n");
  CHECK_THAT(f.row(0), Catch::Matchers::Contains("won by job 9 at site b.org; its checkpoint was carried there"));
}
