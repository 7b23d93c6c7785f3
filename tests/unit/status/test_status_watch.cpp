// `ddpctl status --watch` (status_watch.hpp): polls over the fake Slurm on a
// fake clock until every job shown has ended; off a terminal the first table
// whole, then each row as it changes; on a terminal one frame redrawn in
// place; slower polls while nothing changes. The twins of the Slurm tests
// status_watch_until_done, status_watch_terminal_redraws and
// race_status_watch_live.
#include "catch.hpp"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "fake_runner.hpp"
#include "base/files.hpp"
#include "fixtures.hpp"
#include "helpers.hpp"
#include "status/status_watch.hpp"
#include "base/text.hpp"

using namespace ddpctl;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

size_t count_lines(const std::vector<std::string>& lines, const std::string& part) {
  return std::count_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(part) != std::string::npos; });
}

// What a terminal shows after `text`, knowing only the escapes a watch may
// write: cursor home (ESC[H), clear the screen (ESC[2J), clear to the end of
// the line (ESC[K) or of the screen (ESC[J). Any other escape fails the test.
std::vector<std::string> screen_after(const std::string& text) {
  std::vector<std::string> rows(1);
  size_t row = 0, col = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (rows.size() <= row) rows.resize(row + 1);
    std::string& r = rows[row];
    if (text[i] == '\033') {
      size_t end = text.find_first_not_of("[0123456789", i + 1);
      REQUIRE(end != std::string::npos);
      std::string seq = text.substr(i + 1, end - i);
      i = end;
      if (seq == "[H") {
        row = col = 0;
      } else if (seq == "[2J") {
        rows.assign(rows.size(), "");
      } else if (seq == "[K") {
        r.resize(std::min(r.size(), col));
      } else if (seq == "[J") {
        r.resize(std::min(r.size(), col));
        rows.resize(row + 1);
      } else {
        FAIL("an escape a watch does not write: ESC" << seq);
      }
    } else if (text[i] == '\n') {
      ++row, col = 0;
    } else {
      if (r.size() <= col) r.resize(col + 1, ' ');
      r[col++] = text[i];
    }
  }
  while (!rows.empty() && rows.back().empty()) rows.pop_back();
  return rows;
}

// A watch over the fake Slurm; `then[k]` changes the world during the k-th
// wait, as the jobs would while the user watches.
struct Watch : test::SubmitFixture {
  StatusRequest status;
  std::vector<std::function<void()>> then;
  std::vector<double> waits;
  int polls = 0;
  std::vector<StatusFrame> frames;

  Watch() {
    status.runs_root = req.runs_root;
    slurm.clock.on_sleep = [this, last = slurm.clock.mono]() mutable {
      waits.push_back(slurm.clock.mono - last);
      last = slurm.clock.mono;
      if (waits.size() <= then.size()) then[waits.size() - 1]();
    };
  }
  std::string run(bool terminal) {
    std::ostringstream printed;
    StatusWatch w;
    w.terminal = terminal;
    w.poll_s = slurm.ctx.poll_s;
    w.poll = [&] {
      ++polls;
      frames.push_back(status_frame(collect_status(status, slurm.slurm, slurm.clock.now()), status,
                                    [](const std::string& text, Tone) { return text; }));
      return frames.back();
    };
    watch_status(w, slurm.clock, printed);
    return printed.str();
  }
  test::FakeSlurm::FakeJob& job() { return slurm.jobs.at(0); }
  void ends(test::FakeSlurm::FakeJob& j, const std::string& state) {
    j.state = state;
    j.in_squeue = false;
    j.end = "2026-11-22T09:00:00";
  }
};

}  // namespace

TEST_CASE("status --watch off a terminal: the table once, then each row as it changed, until the job has ended") {
  Watch f;
  SubmitResult r = f.submit();
  f.status.targets = {r.run.id};
  f.then = {[&] { f.job().state = "RUNNING", f.job().nodes = "c1"; }, [] {},
            [&] { f.ends(f.job(), "COMPLETED"); }};
  std::vector<std::string> out = lines_of(f.run(false));
  CHECK(f.polls == 4);  // it ended with the poll that showed the job ended
  REQUIRE(!out.empty());
  CHECK(out[0] == "ddpctl status, every 0.5-30s (Ctrl-C to stop)");
  CHECK(count_lines(out, "ddpctl status, every") == 1);
  CHECK(std::count_if(out.begin(), out.end(), [](const std::string& l) { return l.rfind("RUN ", 0) == 0; }) == 1);
  // The first table, then the row when it ran and when it ended; the poll
  // that changed nothing printed nothing.
  std::vector<std::string> rows;
  for (const auto& l : out)
    if (l.find(" 100 ") != std::string::npos) rows.push_back(l);
  REQUIRE(rows.size() == 3);
  CHECK_THAT(rows[0], Catch::Contains("PENDING"));
  CHECK_THAT(rows[1], Catch::Contains("RUNNING") && Catch::Contains("c1"));
  CHECK_THAT(rows[2], Catch::Contains("COMPLETED"));
  CHECK(out.back() == rows[2]);
  // The first table is the frame as `status` prints it, the run's code below it.
  std::vector<std::string> first(f.frames[0].lines);
  CHECK(std::vector<std::string>(out.begin() + 1, out.begin() + 1 + first.size()) == first);
  CHECK(count_lines(first, r.run.id + " code: ") == 1);
}

TEST_CASE("status --watch polls slower while nothing changes, and at its pace again at a change") {
  Watch f;
  f.submit();
  for (int i = 0; i < 9; ++i) f.then.push_back([] {});
  f.then.push_back([&] { f.job().state = "RUNNING", f.job().nodes = "c1"; });
  f.then.push_back([&] { f.ends(f.job(), "COMPLETED"); });
  f.run(false);
  // After the first poll, each unchanged one doubles the wait up to 30 s.
  CHECK(f.waits == std::vector<double>{0.5, 0.5, 1, 2, 4, 8, 16, 30, 30, 30, 0.5});
  CHECK(f.polls == 12);
}

TEST_CASE("status --watch on a terminal redraws one frame in place, the last showing the job ended") {
  Watch f;
  SubmitResult r = f.submit();
  f.status.targets = {r.run.id};
  // Running, its row is longer (its progress) than when it has ended.
  f.then = {[&] {
              f.job().state = "RUNNING", f.job().nodes = "c1";
              write_file_atomic(f.tmp.path + "/logs/unit_100.progress.json",
                                R"({"epoch": 2, "epochs": 10, "step": 5, "steps": 10, "samples_per_s": 1520})");
            },
            [] {}, [&] { f.ends(f.job(), "COMPLETED"); }};
  std::string text = f.run(true);
  CHECK(f.polls == 4);
  // The screen shows the last frame and nothing of the earlier ones (each
  // drawn over the one before, every line cleared to its end).
  std::vector<std::string> want = {"ddpctl status, every 0.5-30s (Ctrl-C to stop)"};
  want.insert(want.end(), f.frames.back().lines.begin(), f.frames.back().lines.end());
  CHECK(screen_after(text) == want);
  CHECK_THAT(join(screen_after(text), "\n"), Catch::Contains("COMPLETED") && !Catch::Contains("PENDING"));
  // Drawn four times; the screen cleared once, at the start.
  CHECK(count_lines(lines_of(text), "ddpctl status, every") == 4);
  CHECK(text.rfind("\033[H\033[2J", 0) == 0);
  CHECK(text.find("\033[2J", 4) == std::string::npos);
}

TEST_CASE("status --watch follows a race live: RACING, then WON with the winner marked, until every job ended") {
  Watch f;
  struct { Run run; } r{test::submit_race_of(test::write_race_spec(f.tmp.path), f.req.runs_root, f.req.templates_dir, f.slurm.ctx)};
  f.status.targets = {r.run.id};
  f.then = {[&] {
              test::claim_race(r.run, "101", "2x1");
              write_file_atomic(race_dir(r.run) + "/cancelled.100", "100 1795300010\n");
              f.slurm.job("100")->state = "CANCELLED";
              f.slurm.job("101")->state = "RUNNING";
            },
            [&] {
              f.ends(*f.slurm.job("100"), "CANCELLED");
              f.ends(*f.slurm.job("101"), "COMPLETED");
            }};
  std::vector<std::string> out = lines_of(f.run(false));
  CHECK(f.polls == 3);
  std::vector<std::string> group;
  for (const auto& l : out)
    if (l.find(" race ") != std::string::npos && l.find(" - ") != std::string::npos) group.push_back(l);
  REQUIRE(group.size() >= 2);
  CHECK_THAT(group.front(), Catch::Contains("RACING") && Catch::Contains("racing: shapes 1x1, 2x1"));
  CHECK_THAT(group.back(), Catch::Contains("WON") && Catch::Contains("won by shape 2x1 (job 101)"));
  CHECK(count_lines(out, "race winner") >= 1);
  CHECK(count_lines(out, "lost the race: cancelled by the winner") >= 1);
}
