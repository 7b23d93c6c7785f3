#pragma once
// The coordinator's way to the sites (coordinate.hpp) over the user's own
// OpenSSH, as --on goes (remote_call.hpp): per site one connection, found or
// opened at the first call and probed once (which ddpctl of this version is
// there, the folder), then one ssh call per poll. A site that cannot be
// reached is asked again at the next poll, from the start.
#include <map>
#include <memory>

#include "remote/remote_call.hpp"
#include "workflows/coordinate.hpp"

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
    int counted = 0;  // its session's calls already in calls_
  };
  // The site's session, opened and probed at the first call; nullptr with
  // `error` when it cannot be.
  Site* ready(const SiteOfRace& site, std::string& error);
  // One call; `to_file`: its stdout there, `from_file`: its stdin.
  CommandResult run(const SiteOfRace& site, Site& s, const std::vector<std::string>& words,
                    const std::string& to_file = "", const std::string& from_file = "");
  RemoteTarget base_;
  CommandRunner& local_;
  std::map<std::string, Site> sites_;
  int calls_ = 0;
};

}  // namespace ddpctl
