// `ddpctl events` (status/events_stream.hpp): runs' events in time order
// with a cursor on every line, a follower resumed from any line with no gap
// and no duplicate, the state first when it follows, and bad cursors,
// types and cut logs said clearly.
#include "catch.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fake_runner.hpp"
#include "helpers.hpp"
#include "runs/events.hpp"
#include "runs/ledger.hpp"
#include "runs/run_store.hpp"
#include "status/events_stream.hpp"
#include "status/status.hpp"

using namespace ddpctl;
using test::FakeSlurm;

namespace {

struct Stream {
  test::TempDir tmp;
  FakeSlurm s;
  Run a = test::make_local_cpu_run(tmp.path);
  Run b = test::make_local_cpu_run(tmp.path);
  EventsRequest req;
  Stream() {
    req.runs_root = tmp.path;
    req.targets = {a.dir, b.dir};
    req.heartbeat_s = 10;
  }
  std::vector<nlohmann::json> lines(const EventsRequest& r) {
    std::ostringstream out;
    stream_events(r, s.slurm, s.clock, out);
    std::vector<nlohmann::json> got;
    std::istringstream in(out.str());
    for (std::string l; std::getline(in, l);) got.push_back(nlohmann::json::parse(l));
    return got;
  }
  std::vector<nlohmann::json> lines() { return lines(req); }
};

std::vector<std::string> keys(const std::vector<nlohmann::json>& lines) {
  std::vector<std::string> out;
  for (const auto& l : lines) out.push_back(l.value("run", "") + ":" + l["type"].get<std::string>() + ":" + std::to_string(l.value("seq", 0)));
  return out;
}

}  // namespace

TEST_CASE("events of several runs come in time order, each with the cursor after it") {
  Stream f;
  append_event(f.a.dir, EventType::Submitting, {}, 100);
  append_event(f.b.dir, EventType::Submitting, {}, 101);
  append_event(f.a.dir, EventType::Submitted, {{"job", "1"}}, 102);
  append_event(f.b.dir, EventType::Submitted, {{"job", "2"}}, 103);
  std::vector<nlohmann::json> got = f.lines();
  CHECK(keys(got) == std::vector<std::string>{f.a.id + ":submitting:1", f.b.id + ":submitting:1",
                                              f.a.id + ":submitted:2", f.b.id + ":submitted:2"});
  for (const auto& l : got) CHECK(l["cursor"].get<std::string>().rfind("c1.", 0) == 0);
  EventCursor last = decode_cursor(got.back()["cursor"]);
  CHECK(last[f.a.id].seq == 2);
  CHECK(last[f.b.id].seq == 2);

  SECTION("a follower that stopped after any line resumes with every later event once") {
    append_event(f.a.dir, EventType::Started, {{"job", "1"}}, 104);
    std::vector<nlohmann::json> all = f.lines();
    REQUIRE(all.size() == 5);
    for (size_t i = 0; i < all.size(); ++i) {
      EventsRequest r = f.req;
      r.since = all[i]["cursor"];
      std::vector<nlohmann::json> rest = f.lines(r);
      CHECK(keys(rest) == keys(std::vector<nlohmann::json>(all.begin() + static_cast<long>(i) + 1, all.end())));
    }
  }
  SECTION("--types keeps only those, and an unknown type is refused with the list") {
    EventsRequest r = f.req;
    r.types = {"submitted,started"};
    CHECK(keys(f.lines(r)) == std::vector<std::string>{f.a.id + ":submitted:2", f.b.id + ":submitted:2"});
    r.types = {"submited"};
    CHECK_THAT(test::user_error_of([&] { f.lines(r); }),
               Catch::Contains("--types: 'submited': no such event type (did you mean 'submitted'?)"));
  }
  SECTION("a cursor of another run, or ahead of the log, is refused, and `start` reads all") {
    EventsRequest r = f.req;
    r.targets = {f.a.dir};
    r.since = encode_cursor({{"other-run", {1, 10, 0}}});
    CHECK_THAT(test::user_error_of([&] { f.lines(r); }), Catch::Contains("is a cursor of run 'other-run', not of " + f.a.id));
    r.since = encode_cursor({{f.a.id, {9, 4000, event_log_origin(f.a.dir)}}});
    CHECK_THAT(test::user_error_of([&] { f.lines(r); }), Catch::Contains("is ahead of run " + f.a.id + "'s events (event 9 of 2)"));
    r.since = "start";
    CHECK(f.lines(r).size() == 2);
  }
  SECTION("a log cut under the cursor: `gone`, the run's state, then what comes") {
    EventsRequest r = f.req;
    r.since = got.back()["cursor"];
    std::filesystem::resize_file(events_path(f.a.dir), 0);
    append_event(f.a.dir, EventType::Started, {{"job", "1"}}, 110);
    std::vector<nlohmann::json> after = f.lines(r);
    REQUIRE(after.size() >= 2);
    CHECK(after[0]["type"] == "gone");
    CHECK(after[0]["run"] == f.a.id);
    CHECK(after[1]["type"] == "state");
    CHECK(after[1]["run"] == f.a.id);
  }
}

TEST_CASE("following: the state first, each new event as it is appended, heartbeats between, until the runs end") {
  Stream f;
  // Job 100 of run a runs; it ends later, and status's look writes its end.
  update_ledger(f.a, [](std::vector<Attempt>& all) {
    Attempt a;
    a.token = "t1";
    a.shape = "2x1";
    a.outcome = Outcome::Submitted;
    a.job_id = "100";
    all.push_back(a);
  });
  f.s.add("100", "ddpctl:t1", "RUNNING", "n1");
  append_event(f.a.dir, EventType::Submitted, {{"job", "100"}}, 100);
  f.req.targets = {f.a.dir};
  f.req.follow = true;
  int sleeps = 0;
  f.s.clock.on_sleep = [&] {
    ++sleeps;
    if (sleeps == 4) append_event(f.a.dir, EventType::Started, {{"job", "100"}});
    if (sleeps == 200) {
      FakeSlurm::FakeJob* j = f.s.job("100");
      j->state = "COMPLETED";
      j->in_squeue = false;
      j->end = "2026-11-21T23:00:00";
    }
  };
  std::vector<nlohmann::json> got = f.lines();
  INFO(keys(got).front() + " ... " + keys(got).back());
  REQUIRE(got.size() >= 5);
  CHECK(got[0]["type"] == "state");
  CHECK(got[0]["rows"].at(0)["state"] == "RUNNING");
  CHECK(got[1]["type"] == "started");
  CHECK(got[1]["seq"] == 2);
  CHECK(got[2]["type"] == "heartbeat");
  CHECK(got[got.size() - 2]["type"] == "ended");
  CHECK(got[got.size() - 2]["job"] == "100");
  CHECK(got[got.size() - 2]["state"] == "COMPLETED");
  CHECK(got.back()["type"] == "run_ended");
  // A heartbeat every 10 s of the fake clock without a line (a look every 0.25 s).
  size_t beats = 0;
  for (const auto& l : got) beats += l["type"] == "heartbeat";
  CHECK(beats == 4);
}

TEST_CASE("an end squeue still lists is said at once, and a job requeued after it ends again under its next count") {
  // Slurm keeps an ended job in squeue for MinJobAge (5 minutes by
  // default): a follower ends with the run, not when Slurm forgets it.
  Stream f;
  update_ledger(f.a, [](std::vector<Attempt>& all) {
    Attempt a;
    a.token = "t1";
    a.shape = "2x1";
    a.outcome = Outcome::Submitted;
    a.job_id = "100";
    all.push_back(a);
  });
  f.s.add("100", "ddpctl:t1", "RUNNING", "n1");
  f.req.targets = {f.a.dir};
  f.req.follow = true;
  f.req.max_s = 600;
  int sleeps = 0;
  f.s.clock.on_sleep = [&] {
    if (++sleeps == 8) f.s.job("100")->state = "COMPLETED";  // still in squeue
  };
  const double began = f.s.clock.monotonic();
  std::vector<nlohmann::json> got = f.lines();
  INFO(keys(got).front() + " ... " + keys(got).back());
  REQUIRE(got.size() >= 3);
  CHECK(got[got.size() - 2]["type"] == "ended");
  CHECK(got[got.size() - 2]["state"] == "COMPLETED");
  CHECK(got.back()["type"] == "run_ended");
  CHECK(f.s.clock.monotonic() - began < 60);  // the run's end, not max_s, ended it

  // `scontrol requeue` of the ended job: it runs again and ends again.
  FakeSlurm::FakeJob* j = f.s.job("100");
  StatusRequest look;
  look.runs_root = f.tmp.path;
  look.targets = {f.a.dir};
  j->state = "RUNNING", j->restarts = 1;
  collect_status(look, f.s.slurm, 1796000000);  // nothing ended
  j->state = "FAILED", j->exit = 1;
  collect_status(look, f.s.slurm, 1796000000);
  collect_status(look, f.s.slurm, 1796000000);  // seen twice, said once
  std::vector<std::string> ends;
  for (const auto& e : read_events(f.a.dir, 0).events)
    if (e["type"] == "ended") ends.push_back(e["state"].get<std::string>());
  CHECK(ends == std::vector<std::string>{"COMPLETED", "FAILED"});
}

TEST_CASE("a torn line in a log is skipped and said, and the events after it come") {
  Stream f;
  f.req.targets = {f.a.dir};
  append_event(f.a.dir, EventType::Submitting, {}, 100);
  { std::ofstream(events_path(f.a.dir), std::ios::app) << "{\"seq\": 2, \"ty\n"; }
  append_event(f.a.dir, EventType::Submitted, {{"job", "1"}}, 101);
  std::vector<nlohmann::json> got = f.lines();
  CHECK(keys(got) == std::vector<std::string>{f.a.id + ":skipped:0", f.a.id + ":submitting:1", f.a.id + ":submitted:2"});
}
