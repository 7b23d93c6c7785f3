#pragma once
// The calls to the sites of a race across sites, each site's on a thread of
// its own (docs/race.md "Across sites"): a site that is slow, hung or down
// holds no other site back. The coordinator asks every site that is not
// still answering, waits until they all answered or its poll's time is up,
// and decides from what came; a call still in flight goes on (bounded by its
// caller's own deadline) and its answer is taken at a later poll. `status`
// and `cancel` of a race ask every site at once and wait for all.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "sites/site_call.hpp"

namespace ddpctl {

// One site's call as a poll sees it.
struct SiteCall {
  bool answered = false;  // false: still in flight (asked_at says since when)
  std::string out, error;
  double asked_at = 0;  // seconds on the steady clock when it was asked
  long long asked_wall = 0;  // and the time of day then (Unix seconds), for the log
};

class SitePolls {
 public:
  SitePolls(SiteCaller& caller, std::vector<SiteOfRace> sites);
  // A call still in flight is left to end on its own (by its caller's
  // deadline), its thread detached with what it writes to: the caller must
  // outlive it, as the coordinator's, whose process exits at once
  // (cli/coordinate.cpp), or end every call before (the tests' fake sites).
  ~SitePolls();
  SitePolls(const SitePolls&) = delete;
  SitePolls& operator=(const SitePolls&) = delete;

  using Words = std::function<std::vector<std::string>(const SiteOfRace&)>;
  // Asks each site that has no call in flight (`words` says what), then
  // waits until no call is in flight or `wait` passed; one SiteCall per
  // site, in the sites' order: its answer if one came since the last ask,
  // else the call still in flight.
  std::vector<SiteCall> ask(const Words& words, std::chrono::milliseconds wait);
  // Every site asked once, all answers waited for.
  static std::vector<SiteCall> ask_all(SiteCaller& caller, const std::vector<SiteOfRace>& sites, const Words& words);

 private:
  struct Slot {
    std::thread thread;
    bool busy = false;
    SiteCall call;
  };
  // What a call's thread writes to: its own, so that a call left in flight
  // never writes into a SitePolls that is gone.
  struct Shared {
    std::mutex mutex;
    std::condition_variable changed;
    std::vector<Slot> slots;
  };
  SiteCaller& caller_;
  std::vector<SiteOfRace> sites_;
  std::shared_ptr<Shared> shared_;
};

// A task on a thread of its own whose end a loop picks up when it comes (the
// checkpoint's relay beside the polls): run() starts it unless one runs;
// finished() takes its result once. A task still running when this goes is
// left to end on its own, as SitePolls leaves a call: what it uses must
// outlive it.
class Background {
 public:
  ~Background();
  bool running() const;
  void run(std::function<std::string()> task);
  std::optional<std::string> finished();

 private:
  struct Shared {
    std::mutex mutex;
    bool running = false;
    std::optional<std::string> result;
  };
  std::thread thread_;
  std::shared_ptr<Shared> shared_ = std::make_shared<Shared>();
};

// Seconds on the steady clock, for how long a call has been in flight.
double steady_seconds();

// What a site's call says as a poll of the race at `dir`: its answer read
// (site_answer.hpp), and refused as data when it is of another site than
// asked or names another run than the race recorded for that site
// (site_records.hpp; the first run a site names is recorded); a call still
// in flight is a site not reached, saying since when.
SitePoll site_poll_of(const std::string& dir, const SiteOfRace& site, const SiteCall& call);

}  // namespace ddpctl
