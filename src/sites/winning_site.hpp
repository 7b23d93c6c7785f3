#pragma once
// Where `logs`, `report` and `fetch` of a race across sites run
// (docs/race.md "The run where it won"): at the site whose job won, on that
// site's run there (sites_status.hpp's winner_site), with the command's words
// as the user typed them but the race's id replaced by that run.
#include <optional>
#include <string>
#include <vector>

#include "remote/remote_call.hpp"
#include "sites/site_call.hpp"

namespace ddpctl {

struct WinningSiteCall {
  RemoteTarget target;             // the winning site's login host and folder
  std::vector<std::string> words;  // the command's words there
  std::string said;                // the line that says where it runs
};

// The call for `words` (after `ddpctl`) naming the race at `dir` as `query`;
// `base` reaches its sites (race_remote_base). A UserError when no job won
// yet or the site does not say its run, as winner_site says.
WinningSiteCall winning_site_call(const std::string& dir, const std::string& query,
                                  const std::vector<std::string>& words, const RemoteTarget& base, SiteCaller& sites,
                                  const std::string& command);

}  // namespace ddpctl
