// A run's event log (runs/events.hpp): seq without gaps under writers at
// once, a torn line ended and skipped, reads in bounded memory, events
// written once, the follower's cursor.
#include "catch.hpp"

#include <filesystem>
#include <fstream>
#include <thread>

#include "base/diagnostics.hpp"
#include "helpers.hpp"
#include "runs/events.hpp"

using namespace ddpctl;

namespace {

std::string run_dir(const test::TempDir& tmp, const std::string& id = "r-1") {
  std::string dir = tmp.path + "/" + id;
  std::filesystem::create_directories(dir);
  return dir;
}

std::vector<long long> seqs(const std::string& dir) {
  std::vector<long long> out;
  for (const auto& e : read_events(dir, 0, 64 << 20).events) out.push_back(e["seq"].get<long long>());
  return out;
}

}  // namespace

TEST_CASE("events are numbered from 1 and carry the schema, the run and their fields") {
  test::TempDir tmp;
  const std::string dir = run_dir(tmp);
  CHECK(append_event(dir, EventType::Submitting, {{"shape", "1x1"}}, 1795300000.25) == 1);
  CHECK(append_event(dir, EventType::Submitted, {{"job", "100"}, {"seq", 99}, {"run", "other"}}) == 2);
  EventsRead r = read_events(dir, 0);
  REQUIRE(r.events.size() == 2);
  CHECK(r.skipped.empty());
  CHECK(r.events[0]["schema"] == "ddpctl.event/1");
  CHECK(r.events[0]["type"] == "submitting");
  CHECK(r.events[0]["run"] == "r-1");
  CHECK(r.events[0]["time"] == "2026-11-21T22:26:40.250Z");
  CHECK(r.events[0]["shape"] == "1x1");
  // A writer's fields never replace the log's own.
  CHECK(r.events[1]["seq"] == 2);
  CHECK(r.events[1]["run"] == "r-1");
  CHECK(r.ends.back() == r.next_offset);
  CHECK(last_event_seq(dir) == 2);
  for (EventType t : event_types()) CHECK(parse_event_type(event_type_name(t)) == t);
  CHECK_FALSE(parse_event_type("exploded"));
}

TEST_CASE("writers at once never interleave, tear or repeat a line: seq has no gap") {
  test::TempDir tmp;
  const std::string dir = run_dir(tmp);
  std::vector<std::thread> writers;
  for (int w = 0; w < 8; ++w)
    writers.emplace_back([&, w] {
      for (int i = 0; i < 50; ++i) append_event(dir, EventType::Progress, {{"step", i}, {"node", "n" + std::to_string(w)}});
    });
  for (auto& t : writers) t.join();
  std::vector<long long> got = seqs(dir);
  REQUIRE(got.size() == 400);
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == static_cast<long long>(i) + 1);
  CHECK(read_events(dir, 0, 64 << 20).skipped.empty());
}

TEST_CASE("a torn last line (a writer died mid-line) is ended by the next writer and skipped by readers") {
  test::TempDir tmp;
  const std::string dir = run_dir(tmp);
  append_event(dir, EventType::Started, {{"job", "7"}});
  { std::ofstream(events_path(dir), std::ios::app) << R"({"schema":"ddpctl.event/1","seq":2,"ty)"; }
  CHECK(last_event_seq(dir) == 1);
  CHECK(append_event(dir, EventType::Stalled, {{"job", "7"}}) == 2);
  EventsRead r = read_events(dir, 0);
  REQUIRE(r.events.size() == 2);
  CHECK(r.events[1]["type"] == "stalled");
  REQUIRE(r.skipped.size() == 1);
  CHECK_THAT(r.skipped[0], Catch::Contains("a torn or damaged line at byte"));
  CHECK_THAT(r.skipped[0], Catch::Contains("skipped"));
}

TEST_CASE("a line not yet ended is not read, and a read stops at its bound and goes on from there") {
  test::TempDir tmp;
  const std::string dir = run_dir(tmp);
  for (int i = 0; i < 100; ++i) append_event(dir, EventType::Metric, {{"metrics", {{"epoch", i}}}});
  std::vector<long long> got;
  long long at = 0;
  int reads = 0;
  for (;; ++reads) {
    EventsRead r = read_events(dir, at, 1000);  // a few events a read
    if (r.next_offset == at) break;
    for (const auto& e : r.events) got.push_back(e["seq"]);
    at = r.next_offset;
  }
  CHECK(reads > 10);
  REQUIRE(got.size() == 100);
  CHECK(got.back() == 100);
  CHECK(offset_after(dir, 0) == 0);
  CHECK(offset_after(dir, 100) == at);
  CHECK_FALSE(offset_after(dir, 101));
  { std::ofstream(events_path(dir), std::ios::app) << R"({"schema":"ddpctl.event/1","seq":101)"; }
  EventsRead tail = read_events(dir, at);
  CHECK(tail.events.empty());
  CHECK(tail.skipped.empty());
  CHECK(tail.next_offset == at);
}

TEST_CASE("a line longer than a whole read is skipped, and reading goes on") {
  test::TempDir tmp;
  const std::string dir = run_dir(tmp);
  { std::ofstream(events_path(dir)) << std::string(5000, 'x') << "\n"; }
  append_event(dir, EventType::Started, {});
  EventsRead r = read_events(dir, 0, 1000);
  REQUIRE(r.skipped.size() == 1);
  CHECK_THAT(r.skipped[0], Catch::Contains("longer than any event"));
  EventsRead next = read_events(dir, r.next_offset, 1000);
  REQUIRE(next.events.size() == 1);
  CHECK(next.events[0]["seq"] == 1);
}

TEST_CASE("an event written once is written once, whoever writes it") {
  test::TempDir tmp;
  const std::string dir = run_dir(tmp);
  CHECK_FALSE(event_written_once(dir, "ended.12"));
  CHECK(append_event_once(dir, "ended.12", EventType::Ended, {{"job", "12"}}) == 1);
  CHECK(append_event_once(dir, "ended.12", EventType::Ended, {{"job", "12"}}) == 0);
  CHECK(append_event_once(dir, "ended.13", EventType::Ended, {{"job", "13"}}) == 2);
  CHECK(event_written_once(dir, "ended.12"));
  CHECK(seqs(dir) == std::vector<long long>{1, 2});
}

TEST_CASE("the process's observer is told of each event it appends") {
  test::TempDir tmp;
  const std::string dir = run_dir(tmp);
  static std::vector<std::string> seen;
  seen.clear();
  const int id = add_event_observer([](const std::string&, const nlohmann::json& e) { seen.push_back(e["type"]); });
  append_event(dir, EventType::Submitting, {});
  try_append_event(dir, EventType::Submitted, {{"job", "5"}});
  remove_event_observer(id);
  append_event(dir, EventType::CancelAsked, {{"job", "5"}});
  CHECK(seen == std::vector<std::string>{"submitting", "submitted"});
  CHECK_FALSE(try_append_event("", EventType::Started, {}));
  CHECK_FALSE(try_append_event(tmp.path + "/no/such/run", EventType::Started, {}));
}

TEST_CASE("a cursor reads back, and anything else is refused naming --since") {
  EventCursor c{{"a-1", {3, 600, 1795300000250}}, {"b-2", {0, 0, 0}}};
  std::string text = encode_cursor(c);
  CHECK(text.rfind("c1.", 0) == 0);
  EventCursor back = decode_cursor(text);
  CHECK(back.size() == 2);
  CHECK(back["a-1"].seq == 3);
  CHECK(back["a-1"].offset == 600);
  CHECK(back["a-1"].origin == 1795300000250);
  CHECK_THAT(test::user_error_of([] { decode_cursor("yesterday"); }), Catch::Contains("--since: 'yesterday': not a cursor"));
  CHECK_THAT(test::user_error_of([] { decode_cursor("c1.!!!"); }), Catch::Contains("damaged"));
  CHECK_THAT(test::user_error_of([&] { decode_cursor(text.substr(0, text.size() - 6)); }), Catch::Contains("damaged"));
}
