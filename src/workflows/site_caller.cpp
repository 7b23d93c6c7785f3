#include "workflows/site_caller.hpp"

#include <fmt/format.h>

#include "base/diagnostics.hpp"
#include "base/text.hpp"
#include "remote/remote.hpp"

namespace ddpctl {

std::string SshSiteCaller::call(const SiteOfRace& site, const std::vector<std::string>& words, std::string& error) {
  Site& s = sites_[site.name];
  // Counted per call by its session's SshRunner; opening one counts one more.
  int before = s.session ? s.session->ssh().calls() : 0;
  auto count = [&] {
    if (s.session) calls_ += s.session->ssh().calls() - before;
  };
  try {
    if (!s.session) {
      RemoteTarget t = base_;
      t.host = site.host;
      t.dir_option = site.remote_dir;
      auto session = std::make_unique<RemoteSession>(t, local_);
      ++calls_;
      RemoteSide side = probe_remote(session->ssh(), t.host, t.version);
      RemoteDdpctl d = choose_remote_ddpctl(side, t.version);
      if (d.use != RemoteDdpctl::Use::Cluster && d.use != RemoteDdpctl::Use::Installed) {
        error = fmt::format("{} has {}", site.host, d.text);
        calls_ += session->ssh().calls();
        return "";
      }
      s.ddpctl = d.path;
      s.dir = remote_project_dir(t.cwd, t.home, side.home, t.dir_option);
      s.session = std::move(session);
    }
    CommandResult r =
        s.session->ssh().run(remote_ddpctl_argv(site.host, s.dir, s.ddpctl, words), std::chrono::minutes(2));
    count();
    if (r.ok()) return r.out;
    error = r.connection_failed || r.timed_out ? "ssh: " + plain_line(trim(r.err), 300)
                                               : plain_line(trim(r.err + "\n" + r.out), 300);
    if (r.connection_failed || r.timed_out) s.session.reset();
  } catch (const UserError& e) {
    error = plain_line(e.what(), 300);
    s.session.reset();
  }
  return "";
}

}  // namespace ddpctl
