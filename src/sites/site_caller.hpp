#pragma once
// The coordinator's way to the sites (coordinate.hpp) over the user's own
// OpenSSH, as --on goes (remote_call.hpp): per site one connection, found or
// opened at the first call and probed once (which ddpctl of this version is
// there, the folder), then one ssh call per poll. A site that cannot be
// reached is asked again at the next poll, from the start. Calls to several
// sites run at once (site_polls.hpp), and a relay beside them.
#include <atomic>
#include <map>
#include <memory>
#include <mutex>

#include "base/environment.hpp"
#include "remote/remote_call.hpp"
#include "sites/site_call.hpp"

namespace ddpctl {

class SshSiteCaller : public SiteCaller {
 public:
  // `base`: home, ssh command, version and the folder the race was submitted
  // from (each site's folder there follows it, or its remote_dir).
  SshSiteCaller(RemoteTarget base, CommandRunner& local) : base_(std::move(base)), local_(local) {}
  std::string call(const SiteOfRace& site, const std::vector<std::string>& words, std::string& error) override;
  bool relay(const SiteOfRace& from, const std::vector<std::string>& from_words, const SiteOfRace& to,
             const std::vector<std::string>& to_words, const std::string& file, std::string& answer,
             std::string& error) override;
  int calls() const override { return calls_; }

 private:
  struct Site {
    std::unique_ptr<RemoteSession> session;
    std::string ddpctl, dir;
  };
  // The site's session, opened and probed at the first call; nullptr with
  // `error` when it cannot be.
  std::shared_ptr<Site> ready(const SiteOfRace& site, std::string& error);
  // A site whose connection failed is opened afresh at its next call.
  void forget(const SiteOfRace& site, const std::shared_ptr<Site>& s);
  RemoteTarget base_;
  CommandRunner& local_;
  std::mutex mutex_;  // sites_
  std::map<std::string, std::shared_ptr<Site>> sites_;
  std::atomic<int> calls_{0};
};

// How a race across sites at `dir` (its sites.json) reaches its sites: this
// user's home and ssh ($HOME, $DDPCTL_SSH_COMMAND), this version, and the
// folder the race was submitted from (each site's folder there follows it).
RemoteTarget race_remote_base(const std::string& dir, const Environment& env);

// Why a call to a site failed, as a line for the coordinator's log and
// `status`: ssh's own failure, no answer in time, or what ddpctl there said.
std::string site_call_failure(const CommandResult& r);

}  // namespace ddpctl
