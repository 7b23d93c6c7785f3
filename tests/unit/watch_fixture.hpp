#pragma once
// For the unit tests of the watchdog's use of files and commands
// (job_watch.hpp): a job's step in a temporary folder, two tasks on g1 and
// g2 writing their logs at the times a test chooses, a scripted runner (no
// rule: any command fails the test) and a fake clock.
#include <ctime>
#include <fcntl.h>
#include <fmt/format.h>
#include <fstream>
#include <string>
#include <sys/stat.h>

#include "agent/job_watch.hpp"
#include "catch.hpp"
#include "fake_runner.hpp"
#include "helpers.hpp"

namespace ddpctl::test {

// Sets a file's modification time, so that the observer sees the times a test chose.
inline void set_mtime(const std::string& path, double t) {
  timespec ts[2];
  ts[0].tv_sec = ts[1].tv_sec = static_cast<time_t>(t);
  ts[0].tv_nsec = ts[1].tv_nsec = 0;
  REQUIRE(::utimensat(AT_FDCWD, path.c_str(), ts, 0) == 0);
}

struct WatchFixture {
  test::TempDir tmp;
  FakeRunner runner;  // no rule: any command fails the test
  FakeClock clock;
  WatchOptions o;
  WatchFixture() {
    o.log_base = tmp.path + "/job_42";
    o.job_id = "42";
    o.tasks = 2;
    o.tasks_per_node = 1;
    o.per_gpu = true;
    o.nodes = {"g1", "g2"};
    o.stall_after_s = 60;
    o.interval_s = 5;
    o.stacks_wait_s = 0;
  }
  std::string log(int task) const { return fmt::format("{}.restart{}.{}.out", o.log_base, o.attempt, task); }
  // Task `task` writes `text` to its step log at `t`.
  void write_log(int task, const std::string& text, double t) {
    std::ofstream(log(task), std::ios::app) << text;
    set_mtime(log(task), t);
  }
  void both_write(double t) {
    write_log(0, "step\n", t);
    write_log(1, "step\n", t);
  }
};

}  // namespace ddpctl::test
