// What a site of a race across sites answers, read as data (site_answer.cpp,
// site_polls.cpp, site_records.cpp; docs/race.md "What a site may say"):
// every field's type and form checked, a bad answer makes that site "not
// reached" and never an internal error, and what a site says of its run is
// checked against what the race recorded for it.
#include "catch.hpp"

#include <filesystem>

#include "helpers.hpp"
#include "base/files.hpp"
#include "sites/site_answer.hpp"
#include "sites/site_polls.hpp"
#include "runs/site_records.hpp"

using namespace ddpctl;
namespace fs = std::filesystem;

namespace {

// `fields` inside an answer that names run r1.
std::string answer_with(const std::string& fields) {
  return R"({"coordinator":"race-1","run":"r1")" + (fields.empty() ? "" : "," + fields) + "}";
}

std::string refused(const std::string& text) {
  SitePoll p;
  p.name = "a";
  if (read_site_answer(text, p)) return "";
  CHECK_FALSE(p.reached);
  return p.error;
}

}  // namespace

TEST_CASE("a site's answer with a field of the wrong type is refused, saying which, never an internal error") {
  struct Row {
    const char* fields;
    const char* said;
  };
  // The hostile round's nine cases, and more of their kind.
  const std::vector<Row> rows = {
      {R"("jobs":[1])", "its answer's jobs[0] is a number, not an object"},
      {R"("jobs":5)", "its answer's jobs is a number, not a list"},
      {R"("jobs":[{"job":5000}])", "its answer's jobs[0].job is a number, not a string"},
      {R"("jobs":[{"job":null}])", "its answer's jobs[0].job is null, not a string"},
      {R"("jobs":null)", "its answer's jobs is null, not a list"},
      {R"("at_gate":null)", "its answer's at_gate is null, not a list"},
      {R"("grant":{"job":5})", "its answer's grant.job is a number, not a string"},
      {R"("grant":null)", "its answer's grant is null, not an object"},
      {R"("at_gate":[{"job":"7","at":"soon"}])", "its answer's at_gate[0].at is a string, not a number"},
      {R"("passed":[{"job":"7","attempt":"one"}])", "its answer's passed[0].attempt is a string, not a whole number"},
      {R"("round":"2")", "its answer's round is a string, not a whole number"},
      {R"("stand_down":5)", "its answer's stand_down is a number, not a string"},
      {R"("error":["x"])", "its answer's error is a list, not a string"},
      {R"("jobs":[{"job":"7","ended":"yes"}])", "its answer's jobs[0].ended is a string, not true or false"},
  };
  for (const auto& row : rows) {
    INFO(row.fields);
    CHECK(refused(answer_with(row.fields)) == row.said);
  }
  CHECK(refused(R"({"coordinator":5,"run":"r1"})") == "its answer's coordinator is a number, not a string");
  CHECK(refused(R"({"coordinator":"race-1","run":5})") == "its answer's run is a number, not a run id or null");
  CHECK(refused("[1,2]") == "its answer is not the gate's JSON");
}

TEST_CASE("a site's job ids, states, labels and times are checked as Slurm and ddpctl write them") {
  CHECK(refused(answer_with(R"("jobs":[{"job":"7 x"}])")) == "its answer's jobs[0].job is '7 x', not a Slurm job id");
  CHECK(refused(answer_with(R"("jobs":[{"job":"7\nh1 5000 1.0"}])")) ==
        "its answer's jobs[0].job is '7\\nh1 5000 1.0', not a Slurm job id");
  CHECK(refused(answer_with(R"("jobs":[{"job":"--runs=/elsewhere"}])")) ==
        "its answer's jobs[0].job is '--runs=/elsewhere', not a Slurm job id");
  CHECK(refused(answer_with(R"("grant":{"job":"5; rm -rf ~"})")) ==
        "its answer's grant.job is '5; rm -rf ~', not a Slurm job id");
  CHECK(refused(answer_with(R"("jobs":[{"job":"7","state":"\u001b[2JRUNNING"}])")) ==
        "its answer's jobs[0].state is '\\u{001b}[2JRUNNING', not a state of Slurm's");
  CHECK(refused(answer_with(R"("jobs":[{"job":"7","label":"1x4\u009b2J"}])")) ==
        "its answer's jobs[0].label is '1x4\\u{009b}2J', not a shape's label");
  CHECK(refused(answer_with(R"("at_gate":[{"job":"7","at":-1}])")) == "its answer's at_gate[0].at is -1, not a time");
  // Slurm's own forms pass: a plain id, an array task, a heterogeneous component.
  SitePoll p;
  REQUIRE(read_site_answer(answer_with(R"("jobs":[{"job":"7","label":"1x4","state":"RUNNING","reason":"x\u001by"},)"
                                       R"({"job":"8_3","state":"PENDING"},{"job":"9+1","state":"CANCELLED by 0"}])"),
                           p));
  REQUIRE(p.jobs.size() == 3);
  CHECK(p.jobs[0].reason == "x?y");  // words for people are made plain
  CHECK(p.jobs[1].id == "8_3");
}

TEST_CASE("a grant is recorded as a structured record, and one written by an earlier version still reads") {
  test::TempDir tmp;
  SiteGrant g = record_site_grant(tmp.path, SiteGrant{"b.org", "7", 40.5});
  CHECK(g.site == "b.org");
  CHECK(read_file(tmp.path + "/grant") == R"({"at":40.5,"job":"7","site":"b.org"})"
                                          "\n");
  // Recorded once: a second grant finds the first.
  CHECK(record_site_grant(tmp.path, SiteGrant{"a.org", "1", 50}).job == "7");
  write_file_atomic(tmp.path + "/grant.2", "a.org 12 50.000\n");
  write_file_atomic(tmp.path + "/round.2", R"({"why":"requeued"})");
  CHECK(site_round_grant(tmp.path, 2)->job == "12");
  // A grant that is not one (a blank in the job, a forged second line) reads as none.
  write_file_atomic(tmp.path + "/grant.2", "a.org 7 x 50\n");
  CHECK_FALSE(site_round_grant(tmp.path, 2));
  write_file_atomic(tmp.path + "/grant.2", "a.org 7\nh1 5000 1.0\n");
  CHECK_FALSE(site_round_grant(tmp.path, 2));
}

TEST_CASE("the run a site names is the one the race recorded for it, another is refused as data") {
  test::TempDir tmp;
  const std::string dir = tmp.path + "/race-1";
  fs::create_directories(dir);
  SiteOfRace a{"a", "u@a.org", "", {"1x4"}};
  auto poll = [&](const std::string& text) {
    return site_poll_of(dir, a, SiteCall{true, text, "", 0});
  };
  SitePoll first = poll(R"({"coordinator":"race-1","site":"u@a.org","run":"ra-1","jobs":[]})");
  CHECK(first.reached);
  CHECK(recorded_site_run(dir, "a") == "ra-1");
  // The race's own id, or any other run: refused, the site not reached.
  SitePoll hostile = poll(R"({"coordinator":"race-1","site":"u@a.org","run":"race-1","jobs":[]})");
  CHECK_FALSE(hostile.reached);
  CHECK(hostile.error ==
        "its answer names run 'race-1', but this race's run there is ra-1 (as the site first said it)");
  // The gate of another site (one host under two names): refused too.
  SitePoll other = poll(R"({"coordinator":"race-1","site":"h1","run":"ra-1","jobs":[]})");
  CHECK_FALSE(other.reached);
  CHECK(other.error == "its answer is of site 'h1', not of 'u@a.org'");
  // A call still in flight: not reached, saying since when.
  SitePoll waiting = site_poll_of(dir, a, SiteCall{false, "", "", steady_seconds() - 3, 1795300000});
  CHECK_FALSE(waiting.reached);
  CHECK(waiting.error == "still answering the call made at 22:26:40Z (a call ends within 2 min)");
}
