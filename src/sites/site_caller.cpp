#include "sites/site_caller.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/diagnostics.hpp"
#include "base/files.hpp"
#include "base/version.hpp"
#include "base/sized_stream.hpp"
#include "base/text.hpp"
#include "remote/remote.hpp"
#include "runs/race_contract.hpp"

namespace ddpctl {

namespace {

// A poll's call; a checkpoint may take long to go.
constexpr std::chrono::minutes kCallTimeout{2};
constexpr std::chrono::hours kRelayTimeout{2};

}  // namespace

RemoteTarget race_remote_base(const std::string& dir, const Environment& env) {
  RemoteTarget base;
  base.home = env.value("HOME");
  base.ssh_command = env.value("DDPCTL_SSH_COMMAND");
  base.version = ddpctl_version();
  nlohmann::json record = nlohmann::json::parse(read_file(dir + "/sites.json"), nullptr, false);
  base.cwd = record.is_object() && record["cwd"].is_string() ? record["cwd"].get<std::string>()
                                                             : std::filesystem::current_path().string();
  return base;
}

std::string site_call_failure(const CommandResult& r) {
  if (r.timed_out)
    return fmt::format("ssh: no answer within {} s{}", std::chrono::duration_cast<std::chrono::seconds>(kCallTimeout).count(),
                       trim(r.err).empty() ? "" : " (" + plain_line(trim(r.err), 200) + ")");
  if (r.connection_failed)
    return trim(r.err).empty() ? "ssh: the connection failed, and ssh said nothing of why"
                               : "ssh: " + plain_line(trim(r.err), 300);
  std::string said = trim(r.err + "\n" + r.out);
  return said.empty() ? r.describe() : plain_line(said, 300);
}

std::shared_ptr<SshSiteCaller::Site> SshSiteCaller::ready(const SiteOfRace& site, std::string& error) {
  {
    std::lock_guard<std::mutex> hold(mutex_);
    auto it = sites_.find(site.name);
    if (it != sites_.end()) return it->second;
  }
  try {
    RemoteTarget t = base_;
    t.host = site.host;
    t.dir_option = site.remote_dir;
    auto s = std::make_shared<Site>();
    s->session = std::make_unique<RemoteSession>(t, local_);
    ++calls_;  // the connection's check or opening
    RemoteSide side = probe_remote(s->session->ssh(), t.host, t.version);
    RemoteDdpctl d = choose_remote_ddpctl(side, t.version);
    calls_ += s->session->ssh().calls();
    if (d.use != RemoteDdpctl::Use::Cluster && d.use != RemoteDdpctl::Use::Installed) {
      error = fmt::format("{} has {}", site.host, d.text);
      return nullptr;
    }
    s->ddpctl = d.path;
    s->dir = remote_project_dir(t.cwd, t.home, side.home, t.dir_option);
    std::lock_guard<std::mutex> hold(mutex_);
    auto [it, fresh] = sites_.emplace(site.name, s);
    return it->second;  // a relay's thread may have opened it meanwhile: that one is kept
  } catch (const UserError& e) {
    error = plain_line(e.what(), 300);
  }
  return nullptr;
}

void SshSiteCaller::forget(const SiteOfRace& site, const std::shared_ptr<Site>& s) {
  std::lock_guard<std::mutex> hold(mutex_);
  auto it = sites_.find(site.name);
  if (it != sites_.end() && it->second == s) sites_.erase(it);
}

std::string SshSiteCaller::call(const SiteOfRace& site, const std::vector<std::string>& words, std::string& error) {
  std::shared_ptr<Site> s = ready(site, error);
  if (!s) return "";
  ++calls_;
  CommandResult r = s->session->ssh().run(remote_ddpctl_argv(site.host, s->dir, s->ddpctl, words), kCallTimeout);
  if (r.ok()) return r.out;
  error = site_call_failure(r);
  if (r.connection_failed || r.timed_out) forget(site, s);
  return "";
}

bool SshSiteCaller::relay(const SiteOfRace& from, const std::vector<std::string>& from_words, const SiteOfRace& to,
                          const std::vector<std::string>& to_words, const std::string& file, std::string& answer,
                          std::string& error) {
  std::shared_ptr<Site> a = ready(from, error);
  if (!a) return false;
  // What the site sends is bounded by the size it says first, and by the
  // room here (sized_stream.hpp).
  std::string why;
  const std::string folder = std::filesystem::path(file).parent_path().string();
  ++calls_;
  CommandResult r = a->session->ssh().run_to_file(remote_ddpctl_argv(from.host, a->dir, a->ddpctl, from_words), file,
                                                  kRelayTimeout, sized_stream_bound(kCheckpointSizeWord, folder, why));
  if (r.output_cut) {
    error = fmt::format("site {}: its checkpoint was refused: {}", from.name, why);
    return false;
  }
  if (!r.ok()) {
    error = fmt::format("site {}: {}", from.name, site_call_failure(r));
    if (r.connection_failed || r.timed_out) forget(from, a);
    return false;
  }
  std::shared_ptr<Site> b = ready(to, error);
  if (!b) return false;
  ++calls_;
  r = b->session->ssh().run_with_input(remote_ddpctl_argv(to.host, b->dir, b->ddpctl, to_words), file, kRelayTimeout);
  if (!r.ok()) {
    error = fmt::format("site {}: {}", to.name, site_call_failure(r));
    if (r.connection_failed || r.timed_out) forget(to, b);
    return false;
  }
  answer = r.out;
  return true;
}

}  // namespace ddpctl
