// Ended runs cost nothing (status.cpp, issue 37): a job's end, once Slurm
// can no longer change it, is kept in its run's ledger and never asked about
// again; the jobs squeue forgot asked in one sacct call; the runs ended over a
// day ago left out and counted, through the index of ended runs and its views.
#include "catch.hpp"
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "fake_runner.hpp"
#include "base/files.hpp"
#include "helpers.hpp"
#include "fixtures.hpp"
#include "runs/ledger.hpp"
#include "runs/run_store.hpp"
#include "status/status.hpp"
#include "submit/submit.hpp"
#include "base/text.hpp"

using namespace ddpctl;

namespace {

struct EndedStatusFixture : test::SubmitFixture {
  using SubmitFixture::SubmitFixture;
  StatusReport status(std::vector<std::string> targets = {}) {
    StatusRequest r;
    r.targets = std::move(targets);
    r.runs_root = req.runs_root;
    r.json = true;
    return collect_status(r, slurm.slurm, slurm.clock.now());
  }
};

struct Many : EndedStatusFixture {
  using EndedStatusFixture::EndedStatusFixture;
  // `n` runs of one job each, each its own spec.
  std::vector<Run> submit_runs(int n) {
    std::vector<Run> runs;
    for (int i = 0; i < n; ++i) {
      SubmitRequest r = req;
      r.spec = test::write_one_shape_spec(tmp.path, "u" + std::to_string(i));
      runs.push_back(submit_one(load_and_resolve(r.spec, r.sets), r, slurm.ctx, out).run);
    }
    return runs;
  }
  StatusReport status_at(long long now, bool all = false) {
    StatusRequest r;
    r.runs_root = req.runs_root;
    r.all = all;
    r.json = true;
    return collect_status(r, slurm.slurm, now);
  }
  size_t slurm_calls() const { return slurm.runner.calls.size(); }
};

// A time as sacct prints it (the local clock, as parse_slurm_date reads it).
std::string slurm_time(long long t) {
  char buf[32];
  std::time_t tt = static_cast<std::time_t>(t);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", std::localtime(&tt));
  return buf;
}

std::vector<std::string> infos(const StatusReport& s) {
  std::vector<std::string> out;
  for (const auto& r : s.rows) out.push_back(r.state + " " + r.info);
  return out;
}

}  // namespace

TEST_CASE("an ended job is asked of Slurm once: the next status makes no Slurm call") {
  Many f;
  Run run = f.submit_runs(1).at(0);
  f.slurm.jobs[0].state = "CANCELLED by 0";
  f.slurm.jobs[0].in_squeue = false;  // past MinJobAge
  f.slurm.runner.calls.clear();
  StatusReport first = f.status();
  REQUIRE(first.rows.size() == 1);
  CHECK(first.rows[0].state == "CANCELLED");
  CHECK_THAT(first.rows[0].info, Catch::Contains("was cancelled by"));
  CHECK(f.slurm.runner.count("squeue") == 1);
  CHECK(f.slurm.runner.count("sacct") == 1);
  Run recorded = load_run(run.dir);
  REQUIRE(recorded.attempts.at(0).end.has_value());
  CHECK(recorded.attempts.at(0).end->job.state == JobState::Cancelled);
  CHECK(recorded.attempts.at(0).end->job.cancelled_by == "0");

  f.slurm.runner.calls.clear();
  StatusReport second = f.status();
  CHECK(f.slurm_calls() == 0);
  CHECK(infos(second) == infos(first));  // who cancelled it, from the ledger
  CHECK(second.rows[0].json["source"] == "ledger");
  CHECK(second.all_done);
  // By run name and by job id alike.
  f.status({run.id});
  f.status({"100"});
  CHECK(f.slurm_calls() == 0);
}

TEST_CASE("the jobs squeue forgot are asked in one sacct call, whatever the number of runs") {
  Many f;
  const int n = 210;  // more than one squeue chunk (SlurmClient::kJobsPerQuery)
  f.submit_runs(n);
  const char* ends[] = {"COMPLETED", "FAILED", "CANCELLED by 0", "TIMEOUT", "OUT_OF_MEMORY"};
  for (int i = 0; i < n; ++i) {
    f.slurm.jobs[i].state = ends[i % 5];
    f.slurm.jobs[i].in_squeue = false;
  }
  f.slurm.runner.calls.clear();
  StatusReport s = f.status();
  CHECK(s.rows.size() == static_cast<size_t>(n));
  CHECK(f.slurm.runner.count("squeue") == 2);
  CHECK(f.slurm.runner.count("sacct") == 1);
  CHECK(f.slurm_calls() == 3);
  f.slurm.runner.calls.clear();
  CHECK(f.status().rows.size() == static_cast<size_t>(n));
  CHECK(f.slurm_calls() == 0);
}

TEST_CASE("cancelled jobs squeue still lists take one sacct for who cancelled them, not one each") {
  Many f("24.11");  // squeue --json with exit codes: only who cancelled is missing
  f.submit_runs(5);
  for (auto& j : f.slurm.jobs) j.state = "CANCELLED";
  f.slurm.runner.calls.clear();
  StatusReport s = f.status();
  REQUIRE(s.rows.size() == 5);
  for (const auto& r : s.rows) CHECK(r.state == "CANCELLED");
  CHECK(f.slurm.runner.count("sacct") == 1);
  // Still in squeue, so not yet final: the next status asks again, once.
  f.slurm.runner.calls.clear();
  f.status();
  CHECK(f.slurm.runner.count("sacct") == 1);
  CHECK(f.slurm.runner.count("squeue") == 1);
}

TEST_CASE("a requeued job is not taken as ended while it passes through FAILED") {
  Many f;
  Run run = f.submit_runs(1).at(0);
  // Requeued: the old step is killed, squeue shows FAILED under the same id.
  f.slurm.jobs[0].state = "FAILED";
  f.slurm.jobs[0].nodes = "g1";
  CHECK(f.status().rows.at(0).state == "FAILED");
  CHECK_FALSE(load_run(run.dir).attempts.at(0).end.has_value());
  SECTION("with the controller down, accounting's FAILED is not final either") {
    f.slurm.controller_down = true;
    f.status();
    CHECK_FALSE(load_run(run.dir).attempts.at(0).end.has_value());
    f.slurm.controller_down = false;
  }
  // ... and then PENDING again, then running its second attempt.
  f.slurm.jobs[0].state = "PENDING";
  CHECK(f.status().rows.at(0).state == "PENDING");
  f.slurm.jobs[0].state = "RUNNING";
  CHECK(f.status().rows.at(0).state == "RUNNING");
  // It ends for good: squeue forgets it, sacct has both attempts.
  f.slurm.jobs[0].state = "COMPLETED";
  f.slurm.jobs[0].earlier = {"NODE_FAIL"};
  f.slurm.jobs[0].in_squeue = false;
  StatusReport ended = f.status();
  CHECK(ended.rows.at(0).state == "COMPLETED");
  CHECK_THAT(ended.rows.at(0).info, Catch::StartsWith("attempt 2 (requeued after NODE_FAIL on g1)"));
  Run recorded = load_run(run.dir);
  REQUIRE(recorded.attempts.at(0).end.has_value());
  CHECK(recorded.attempts.at(0).end->job.requeues == 1);
  REQUIRE(recorded.attempts.at(0).end->earlier.size() == 1);
  CHECK(recorded.attempts.at(0).end->earlier[0].state == JobState::NodeFail);
  // Its earlier attempt explains the requeue from the ledger.
  f.slurm.runner.calls.clear();
  CHECK(infos(f.status()) == infos(ended));
  CHECK(f.slurm_calls() == 0);
}

TEST_CASE("a NODE_FAIL's lost node is named from the ledger, the node states read once") {
  Many f;
  Run run = f.submit_runs(1).at(0);
  // The real 22.05 sinfo answer, with node g2 down as after a crash.
  nlohmann::json nodes = nlohmann::json::parse(read_file(test::source_dir() + "/tests/unit/data/22.05/sinfo.json"));
  for (auto& n : nodes["nodes"])
    if (n["name"] == "g2") n["state"] = "down";
  f.slurm.runner.on("sinfo", {"--json"}, [&](const std::vector<std::string>&) { return test::exits(0, nodes.dump()); });
  f.slurm.jobs[0].state = "NODE_FAIL";
  f.slurm.jobs[0].nodes = "g[1-2]";
  f.slurm.jobs[0].in_squeue = false;
  f.slurm.runner.calls.clear();
  StatusReport first = f.status();
  CHECK_THAT(first.rows.at(0).info, Catch::Contains("lost node g2"));
  CHECK(f.slurm.runner.count("sinfo") == 1);
  REQUIRE(load_run(run.dir).attempts.at(0).end.has_value());
  CHECK_FALSE(load_run(run.dir).attempts.at(0).end->nodes.empty());
  f.slurm.runner.calls.clear();
  CHECK(infos(f.status()) == infos(first));
  CHECK(f.slurm_calls() == 0);
}

TEST_CASE("status without arguments: active runs and those ended within a day, the footer counts the others") {
  Many f;
  std::vector<Run> runs = f.submit_runs(3);
  long long created = parse_utc_iso(runs[0].created_at);
  long long now = created + 3 * 86400;
  // Run 0 ended two days before now, run 1 an hour before now, run 2 waits.
  f.slurm.jobs[0].state = "COMPLETED";
  f.slurm.jobs[0].end = slurm_time(created + 100);
  f.slurm.jobs[1].state = "FAILED";
  f.slurm.jobs[1].end = slurm_time(now - 3600);
  f.slurm.jobs[0].in_squeue = f.slurm.jobs[1].in_squeue = false;
  StatusReport s = f.status_at(now);
  REQUIRE(s.rows.size() == 2);
  CHECK(s.rows[0].job == "101");
  CHECK(s.rows[1].job == "102");
  CHECK(s.older_runs == 1);
  CHECK(older_runs_line(s.older_runs) == "1 older run (ended over 24 h ago): --all");
  CHECK(older_runs_line(1488) == "1,488 older runs (ended over 24 h ago): --all");
  CHECK(older_runs_line(0).empty());
  StatusReport all = f.status_at(now, true);
  CHECK(all.rows.size() == 3);
  CHECK(all.older_runs == 0);
  // A day later the failed one is older too; the waiting one stays, however old.
  StatusReport later = f.status_at(now + 86400);
  REQUIRE(later.rows.size() == 1);
  CHECK(later.rows[0].job == "102");
  CHECK(later.older_runs == 2);
}

TEST_CASE("the index of ended runs is used when it matches the ledger, and never trusted otherwise") {
  Many f;
  std::vector<Run> runs = f.submit_runs(2);
  long long now = parse_utc_iso(runs[0].created_at) + 3 * 86400;
  for (auto& j : f.slurm.jobs) j.state = "COMPLETED", j.in_squeue = false;
  f.slurm.jobs[0].end = f.slurm.jobs[1].end = slurm_time(now - 2 * 86400);
  CHECK(f.status_at(now).older_runs == 2);
  const std::string index = f.req.runs_root + "/.index.json";
  REQUIRE(std::filesystem::exists(index));

  SECTION("used: an indexed run is not read again") {
    // Were run 0 read, its damaged record would hide it from the count.
    write_file_atomic(runs[0].dir + "/run.json", "{damaged");
    CHECK(f.status_at(now).older_runs == 2);
  }
  SECTION("a damaged index (a crash mid-write leaves at worst a stray temporary file) is rebuilt") {
    write_file_atomic(index, "{\"format\": 1, \"ended\": {\"" + runs[0].id + "\": ");
    write_file_atomic(f.req.runs_root + "/.index.json.tmp.a1b2c3", "{\"format\": 1");
    StatusReport s = f.status_at(now);
    CHECK(s.older_runs == 2);
    CHECK(s.rows.empty());
    CHECK(nlohmann::json::parse(read_file(index))["ended"].size() == 2);
  }
  SECTION("stale: a ledger changed since it was indexed is read again") {
    Run r = load_run(runs[1].dir);
    update_ledger(r, [](std::vector<Attempt>& a) { attempt_by_token(a, "abcdefabcdef"); });  // a new intent
    StatusReport s = f.status_at(now);
    CHECK(s.older_runs == 1);
    REQUIRE(s.rows.size() == 2);  // its job, and the new attempt
    CHECK(s.rows[0].job == "101");
    CHECK(s.rows[1].state == "UNCONFIRMED");
  }
  SECTION("a lying index (ended, for a ledger it was not read from) changes nothing") {
    nlohmann::json doc = nlohmann::json::parse(read_file(index));
    for (auto& [id, e] : doc["ended"].items()) e["ledger"] = "1:2:3.000000004";
    write_file_atomic(index, doc.dump());
    Run r = load_run(runs[1].dir);
    update_ledger(r, [](std::vector<Attempt>& a) { attempt_by_token(a, "abcdefabcdef"); });
    StatusReport s = f.status_at(now);
    CHECK(s.older_runs == 1);
    CHECK(s.rows.size() == 2);
  }
}

TEST_CASE("status --all shows an ended run from the index's view, and reads the run again when the view cannot be trusted") {
  Many f;
  std::vector<Run> runs = f.submit_runs(2);
  long long now = parse_utc_iso(runs[0].created_at) + 3 * 86400;
  for (auto& j : f.slurm.jobs) j.state = "FAILED", j.exit = 3, j.in_squeue = false;
  StatusReport first = f.status_at(now, true);
  REQUIRE(first.rows.size() == 2);
  const std::string views = f.req.runs_root + "/.index-views";
  REQUIRE(std::filesystem::exists(views));
  f.slurm.runner.calls.clear();

  SECTION("the view stands for the run: its record is not read") {
    write_file_atomic(runs[0].dir + "/run.json", "{damaged");
    StatusReport s = f.status_at(now, true);
    CHECK(infos(s) == infos(first));
    CHECK(s.rows[0].json["exit"]["code"] == 3);
    CHECK(s.rows[0].json["source"] == "ledger");
    CHECK(f.slurm_calls() == 0);
    // Without --json, the rows of views carry no JSON (not parsed).
    StatusRequest table;
    table.runs_root = f.req.runs_root;
    table.all = true;
    StatusReport t = collect_status(table, f.slurm.slurm, now);
    CHECK(infos(t) == infos(first));
    CHECK(t.rows[0].json.is_null());
  }
  SECTION("a views file cut short or from another ddpctl is ignored, and written again") {
    std::string text = read_file(views);
    write_file_atomic(views, text.substr(0, text.size() / 2));
    CHECK(infos(f.status_at(now, true)) == infos(first));
    write_file_atomic(views, "ddpctl 0.0.0-other\n" + text.substr(text.find('\n') + 1));
    CHECK(infos(f.status_at(now, true)) == infos(first));
    CHECK(read_file(views) == text);
    CHECK(f.slurm_calls() == 0);
  }
  SECTION("a ledger changed since the view was made: the run is read") {
    Run r = load_run(runs[1].dir);
    update_ledger(r, [](std::vector<Attempt>& a) { attempt_by_token(a, "abcdefabcdef"); });
    StatusReport s = f.status_at(now, true);
    REQUIRE(s.rows.size() == 3);
    CHECK(s.rows[2].state == "UNCONFIRMED");
  }
}
