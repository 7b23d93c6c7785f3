// FileLock (lock.cpp): one holder at a time per file, a waiter says whom it
// waits for, and different files never wait on each other.
#include "catch.hpp"
#include <memory>

#include "fake_runner.hpp"
#include "helpers.hpp"
#include "base/lock.hpp"

using namespace ddpctl;

TEST_CASE("a second lock waits for the first, says whom it waits for, and gets it once released") {
  test::TempDir tmp;
  test::FakeClock clock;
  std::string path = tmp.path + "/locks/run.lock";
  auto first = std::make_unique<FileLock>(path, clock, [](const std::string&) { FAIL("the first lock waited"); });
  std::vector<std::string> told;
  // The holder finishes after 3 s of the waiter's polling.
  clock.on_sleep = [&] {
    if (clock.mono >= 1003) first.reset();
  };
  FileLock second(path, clock, [&](const std::string& holder) { told.push_back(holder); });
  REQUIRE(told.size() == 1);  // said once, after a second
  CHECK(told[0] == this_process());
  CHECK(second.waited_s() >= 3);
  CHECK(second.waited_s() < 4);
}

TEST_CASE("locks on different files never wait") {
  test::TempDir tmp;
  test::FakeClock clock;
  auto never = [](const std::string&) { FAIL("waited"); };
  FileLock a(tmp.path + "/a.lock", clock, never);
  FileLock b(tmp.path + "/b.lock", clock, never);
  CHECK(a.waited_s() == 0);
  CHECK(b.waited_s() == 0);
  CHECK(clock.sleeps == 0);
}

TEST_CASE("a lock file it cannot create is an error naming the path") {
  test::FakeClock clock;
  CHECK_THAT(test::user_error_of([&] { FileLock l("/proc/no/such/x.lock", clock, [](const std::string&) {}); }),
             Catch::Contains("/proc/no/such/x.lock"));
}
