#pragma once
// A race across sites as one stream (docs/json.md "A race across sites"):
// the coordinator asks each site for its run's events after the last it
// took (race-gate --events-after) and appends them to the race's log here,
// each with the site, the site's run and its seq there, before it writes
// what it decided from the same poll: a grant comes after the claim that
// won it, a stand-down after the other site's start. One coordinator runs
// at a time (its lock), so each site's events come here once.
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sites/site_race.hpp"

namespace ddpctl {

class SiteEventRelay {
 public:
  using Say = std::function<void(const std::string&)>;
  // `dir`: the race's run here; where each site's relay stands is read
  // back from its log (a coordinator started again goes on from there).
  explicit SiteEventRelay(std::string dir);

  // The seq to ask `site` for events after; -1: do not ask (its ddpctl
  // refused --events-after: an older version).
  long long after(const std::string& site) const;
  // A site's call failed: when its ddpctl does not know --events-after,
  // the site is asked without it from then on, and the log says so once.
  void refused(const std::string& site, const std::string& error, const Say& say);
  // Appends the new events of the polls' sites, each site's in its order,
  // merged by time; one that cannot be written is asked for again.
  void relay(const std::vector<SitePoll>& polls, const Say& say);

 private:
  std::string dir_;
  std::map<std::string, long long> seq_;     // site -> the last seq appended here
  std::set<std::string> refused_;
};

}  // namespace ddpctl
