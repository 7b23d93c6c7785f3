#include "sites/winning_site.hpp"

#include <filesystem>
#include <fmt/format.h>

#include "sites/sites_status.hpp"

namespace ddpctl {

WinningSiteCall winning_site_call(const std::string& dir, const std::string& query,
                                  const std::vector<std::string>& words, const RemoteTarget& base, SiteCaller& sites,
                                  const std::string& command) {
  WinnerSite w = winner_site(dir, sites, command);
  WinningSiteCall call;
  call.said = fmt::format("ddpctl: race {} was won by job {} at site {}: its run there is {} ({})",
                          std::filesystem::path(dir).filename().string(), w.job, w.site.name, w.run, w.site.host);
  // The command as typed, on the site's run there (the race's id named here).
  call.words = words;
  for (size_t i = 1; i < call.words.size(); ++i)
    if (call.words[i] == query) {
      call.words[i] = w.run;
      break;
    }
  call.target = base;
  call.target.host = w.site.host;
  call.target.dir_option = w.site.remote_dir;
  return call;
}

}  // namespace ddpctl
