// The race's protocol on disk (race_contract.cpp), from the readers' end:
// one row per file, each name and variable once, the lines the scripts write
// read back, and the run store's readers finding the files under the
// table's names (the script's end: tests/unit/script/test_render_race_contract.cpp).
#include "catch.hpp"

#include <filesystem>
#include <set>

#include "base/files.hpp"
#include "helpers.hpp"
#include "runs/race_contract.hpp"
#include "runs/race_files.hpp"
#include "runs/race_gate_files.hpp"

using namespace ddpctl;
namespace fs = std::filesystem;

TEST_CASE("race contract: every file of the race has one name and one template variable") {
  std::set<std::string> names, vars;
  for (RaceFile f : race_files_in_table()) {
    CHECK(names.insert(race_file_name(f)).second);
    CHECK(vars.insert(race_file_var(f)).second);
    CHECK(race_file_var(f).find_first_not_of("abcdefghijklmnopqrstuvwxyz_") == std::string::npos);
  }
  CHECK(race_files_in_table().size() == 17);
  // The wire never changes: a job rendered by an earlier ddpctl writes these.
  CHECK(race_file_name(RaceFile::Claim) == "claim");
  CHECK(race_file_name(RaceFile::AtGate) == "at.");
  CHECK(race_file_name(RaceFile::StandDown) == "stand-down");
  CHECK(race_file_name(RaceFile::StoodDown) == "stood-down.");
  CHECK(race_file_name(RaceFile::Round) == "round.");
}

TEST_CASE("race contract: the lines the scripts write are read back, and what is not one is refused") {
  RaceLine l{"4242", "2x4", 1795300000.5, 1};
  CHECK(race_event_line(l) == "4242 2x4 1795300000.500 1");
  auto back = parse_race_event_line(race_event_line(l) + "\n");
  REQUIRE(back);
  CHECK(back->job_id == "4242");
  CHECK(back->label == "2x4");
  CHECK(back->at == 1795300000.5);
  CHECK(back->attempt == 1);
  // The script's own forms: no attempt, `date +%s.%N`, passed's waiting seconds after.
  CHECK(parse_race_event_line("7 1x4 1795300000.123456789")->attempt == 0);
  CHECK(parse_race_event_line("7 1x4 1795300000.1 0 12")->label == "1x4");
  auto cancelled = parse_race_event_line(cancelled_line("12_3", 1795300001));
  REQUIRE(cancelled);
  CHECK(cancelled->job_id == "12_3");
  CHECK(cancelled->label.empty());
  CHECK(cancelled->at == 1795300001);
  CHECK_FALSE(parse_race_event_line("--runs=/x 1x4 1"));
  CHECK_FALSE(parse_race_event_line(""));
  GrantLine g{"9", "u@b.org", 1795300002};
  CHECK(grant_line(g) == "9 u@b.org 1795300002.000");
  auto gb = parse_grant_line(grant_line(g));
  REQUIRE(gb);
  CHECK(gb->site == "u@b.org");
  CHECK_FALSE(parse_grant_line("9"));
}

TEST_CASE("race contract: the run store's readers find the files under the table's names") {
  test::TempDir tmp;
  Run run;
  run.dir = tmp.path + "/r";
  fs::create_directories(run.dir);
  init_race(run);
  record_race_job(run, "1x4", "11");
  fs::create_directories(race_jobs_dir(run, 2));  // made by whoever opens generation 2
  record_race_job(run, "4x1", "12", 2);
  CHECK(read_file(run.dir + "/race/" + race_file_name(RaceFile::Jobs) + "/1x4") == "11\n");
  CHECK(fs::exists(run.dir + "/race/" + race_file_name(RaceFile::Generation) + "2/" + race_file_name(RaceFile::Jobs) + "/4x1"));
  CHECK(claim_dir(run, 1) == run.dir + "/race/" + race_file_name(RaceFile::Claim));
  fs::create_directories(claim_dir(run, 1));
  write_file_atomic(claim_dir(run, 1) + "/" + race_file_name(RaceFile::Winner), race_event_line({"11", "1x4", 100, 0}));
  write_file_atomic(run.dir + "/race/" + race_file_name(RaceFile::StoodDown) + "12", race_event_line({"12", "4x1", 101, 0}));
  write_file_atomic(run.dir + "/race/" + race_file_name(RaceFile::Cancelled) + "13", cancelled_line("13", 102));
  RaceState s = read_race(run);
  REQUIRE(s.generations.size() == 2);
  REQUIRE(s.generations[0].winner);
  CHECK(s.generations[0].winner->job_id == "11");
  REQUIRE(s.stood_down.size() == 1);
  CHECK(s.stood_down[0].label == "4x1");
  REQUIRE(s.cancelled.size() == 1);
  CHECK(s.cancelled[0].job_id == "13");
  // The gate: its site record, a round, an event and the grant.
  init_gate(run, "race-1", "u@a.org", 60);
  CHECK(fs::exists(run.dir + "/race/" + race_file_name(RaceFile::Gate) + "/" + race_file_name(RaceFile::GateSite)));
  CHECK(open_gate_round(run, 2, "requeued", 200));
  const std::string round = gate_round_dir(run, 2);
  CHECK(round == run.dir + "/race/gate/" + race_file_name(RaceFile::Round) + "2");
  write_file_atomic(round + "/" + race_file_name(RaceFile::AtGate) + "11", race_event_line({"11", "1x4", 201, 1}));
  write_grant(round, "11", "u@a.org", 202);
  CHECK(read_file(round + "/" + race_file_name(RaceFile::Grant)) == "11 u@a.org 202.000\n");
  GateState gate = read_gate(run);
  CHECK(gate.round == 2);
  REQUIRE(gate.at.size() == 1);
  CHECK(gate.at[0].attempt == 1);
  REQUIRE(gate.grant);
  CHECK(gate.grant->job_id == "11");
  CHECK_THAT(gate.opened, Catch::Matchers::EndsWith(" requeued"));
}
