#include "workflows/site_caller.hpp"

#include <fmt/format.h>

#include "base/diagnostics.hpp"
#include "base/text.hpp"
#include "remote/remote.hpp"

namespace ddpctl {

SshSiteCaller::Site* SshSiteCaller::ready(const SiteOfRace& site, std::string& error) {
  Site& s = sites_[site.name];
  if (s.session) return &s;
  try {
    RemoteTarget t = base_;
    t.host = site.host;
    t.dir_option = site.remote_dir;
    auto session = std::make_unique<RemoteSession>(t, local_);
    ++calls_;
    RemoteSide side = probe_remote(session->ssh(), t.host, t.version);
    RemoteDdpctl d = choose_remote_ddpctl(side, t.version);
    calls_ += session->ssh().calls();
    if (d.use != RemoteDdpctl::Use::Cluster && d.use != RemoteDdpctl::Use::Installed) {
      error = fmt::format("{} has {}", site.host, d.text);
      return nullptr;
    }
    s.ddpctl = d.path;
    s.dir = remote_project_dir(t.cwd, t.home, side.home, t.dir_option);
    s.session = std::move(session);
    s.counted = s.session->ssh().calls();
    return &s;
  } catch (const UserError& e) {
    error = plain_line(e.what(), 300);
  }
  return nullptr;
}

CommandResult SshSiteCaller::run(const SiteOfRace& site, Site& s, const std::vector<std::string>& words,
                                 const std::string& to_file, const std::string& from_file) {
  std::vector<std::string> argv = remote_ddpctl_argv(site.host, s.dir, s.ddpctl, words);
  const auto timeout = to_file.empty() && from_file.empty() ? std::chrono::milliseconds(std::chrono::minutes(2))
                                                            : std::chrono::milliseconds(std::chrono::hours(2));
  CommandResult r = !to_file.empty()     ? s.session->ssh().run_to_file(argv, to_file, timeout)
                    : !from_file.empty() ? s.session->ssh().run_with_input(argv, from_file, timeout)
                                         : s.session->ssh().run(argv, timeout);
  // Counted per call by its session's SshRunner.
  calls_ += s.session->ssh().calls() - s.counted;
  s.counted = s.session->ssh().calls();
  return r;
}

namespace {

std::string why_failed(const CommandResult& r) {
  return r.connection_failed || r.timed_out ? "ssh: " + plain_line(trim(r.err), 300)
                                            : plain_line(trim(r.err + "\n" + r.out), 300);
}

}  // namespace

std::string SshSiteCaller::call(const SiteOfRace& site, const std::vector<std::string>& words, std::string& error) {
  Site* s = ready(site, error);
  if (!s) return "";
  CommandResult r = run(site, *s, words);
  if (r.ok()) return r.out;
  error = why_failed(r);
  if (r.connection_failed || r.timed_out) sites_.erase(site.name);
  return "";
}

bool SshSiteCaller::relay(const SiteOfRace& from, const std::vector<std::string>& from_words, const SiteOfRace& to,
                          const std::vector<std::string>& to_words, const std::string& file, std::string& answer,
                          std::string& error) {
  Site* a = ready(from, error);
  if (!a) return false;
  CommandResult r = run(from, *a, from_words, file);
  if (!r.ok()) {
    error = fmt::format("site {}: {}", from.name, why_failed(r));
    if (r.connection_failed || r.timed_out) sites_.erase(from.name);
    return false;
  }
  Site* b = ready(to, error);
  if (!b) return false;
  r = run(to, *b, to_words, "", file);
  if (!r.ok()) {
    error = fmt::format("site {}: {}", to.name, why_failed(r));
    if (r.connection_failed || r.timed_out) sites_.erase(to.name);
    return false;
  }
  answer = r.out;
  return true;
}

}  // namespace ddpctl
