#pragma once
// How the coordinator of a race across sites, and `status`, `cancel`,
// `logs`, `report` and `fetch` of one, reach its sites: an interface, so
// that the decisions around it are tested with fake sites; SshSiteCaller
// (site_caller.hpp) is the real one, over the user's ssh.
#include <string>
#include <vector>

#include "sites/site_race.hpp"

namespace ddpctl {

// How the coordinator reaches a site: `ddpctl WORDS` in the site's folder
// there, its stdout back; "" and `error` when it could not be asked.
class SiteCaller {
 public:
  virtual ~SiteCaller() = default;
  virtual std::string call(const SiteOfRace& site, const std::vector<std::string>& words, std::string& error) = 0;
  // The ssh calls made so far (connections opened included), for the log.
  // call() and relay() are made from several threads at once, never two at
  // once for one site, but a relay beside a call to its sites.
  virtual int calls() const { return 0; }
  // `ddpctl FROM_WORDS` at `from`, its stdout into `file` here, then
  // `ddpctl TO_WORDS` at `to` with `file` on its stdin: a checkpoint going
  // to the site that won a re-race. false with `error` when either failed;
  // `answer` is the second's stdout. The first's stdout is bounded by what
  // it declares (race_checkpoint.hpp's size line) and by the free space
  // here; the second is told the size it gets.
  virtual bool relay(const SiteOfRace& from, const std::vector<std::string>& from_words, const SiteOfRace& to,
                     const std::vector<std::string>& to_words, const std::string& file, std::string& answer,
                     std::string& error) {
    (void)from, (void)from_words, (void)to, (void)to_words, (void)file, (void)answer;
    error = "this caller cannot carry a checkpoint";
    return false;
  }
};

}  // namespace ddpctl
