#include "sites/sites_status.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/diagnostics.hpp"
#include "base/files.hpp"
#include "base/text.hpp"
#include "runs/job_states.hpp"
#include "sites/site_polls.hpp"
#include "runs/site_records.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

std::optional<std::string> find_site_race(const std::string& runs_root, const std::string& query) {
  std::error_code ec;
  if (query.empty() || query.find('/') != std::string::npos) return std::nullopt;
  if (fs::exists(runs_root + "/" + query + "/sites.json", ec)) return runs_root + "/" + query;
  // A prefix names the race only when it names nothing else: a run name
  // that a plain run shares stays that run's (its newest, as elsewhere).
  std::vector<std::string> found;
  bool others = false;
  for (const auto& entry : fs::directory_iterator(runs_root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(query, 0) != 0) continue;
    if (fs::exists(entry.path() / "sites.json", ec)) found.push_back(entry.path().string());
    else if (fs::exists(entry.path() / "run.json", ec)) others = true;
  }
  if (found.size() == 1 && !others) return found.front();
  return std::nullopt;
}

namespace {

const RaceEvent* event_of(const std::vector<RaceEvent>& v, const std::string& id) {
  for (const auto& e : v)
    if (e.job_id == id) return &e;
  return nullptr;
}

std::string job_info(const SitePoll& p, const SiteJob& j, const std::optional<SiteGrant>& grant) {
  const RaceEvent* at = event_of(p.at_gate, j.id);
  if (const RaceEvent* passed = event_of(p.passed, j.id))
    return fmt::format("granted: went through its gate after {:.0f} s there and trains{}",
                       at ? std::max(0.0, passed->at - at->at) : 0.0,
                       j.state == "COMPLETED" ? " (done)" : "");
  if (event_of(p.timeouts, j.id))
    return p.grant && *p.grant == j.id ? "granted after it stood down held: released, starts again when Slurm lets it"
                                       : "stood down held: no grant within its gate time; it trains only if granted";
  if (at && j.state == "RUNNING")
    return p.grant && *p.grant == j.id ? "granted: going through its gate"
                                       : fmt::format("waiting at its gate for the coordinator since {}",
                                                     clock_time(static_cast<long long>(at->at)));
  if (p.stood_down) {
    std::string winner = grant ? fmt::format("site {} won (job {})", grant->site, grant->job) : "another site won";
    if (j.state == "CANCELLED" || j.ended) return "stood down: " + winner;
    return "standing down: " + winner;
  }
  if (j.state == "PENDING") return j.reason.empty() || j.reason == "None" ? "waiting to start" : "waiting: " + j.reason;
  if (p.round >= 2 && (j.state == "CANCELLED" || j.ended))
    return fmt::format("stood down in an earlier round (this site races round {} of a re-race)", p.round);
  return "";
}

}  // namespace

std::vector<SiteRow> site_race_rows(const std::string& dir, SiteCaller& sites) {
  std::optional<SiteGrant> grant = read_site_grant(dir);
  std::error_code ec;
  std::vector<SiteRow> rows;
  const std::string id = fs::path(dir).filename().string();
  const bool over = fs::exists(dir + "/coordinator.done", ec);
  std::optional<long> coordinator = running_coordinator(dir);
  std::string race_info =
      grant ? fmt::format("won by job {} at site {}", grant->job, grant->site) : std::string("no job granted yet");
  // A re-race: its round, why, and whether its grant waits for the checkpoint.
  if (const int round = site_race_round(dir); round >= 2) {
    std::optional<SiteGrant> now = site_round_grant(dir, round);
    const bool relayed = fs::exists(fmt::format("{}/relay.{}", dir, round), ec);
    const std::string from = read_rounds(dir, round).checkpoint_site;
    std::string waits;
    if (now && !relayed && !from.empty() && from != now->site) {
      // A grant recorded but not sent: it waits for the checkpoint, said so.
      const std::string why = relay_error(dir, round);
      waits = fmt::format("; not sent yet: it waits for the checkpoint to go from site {}{}", from,
                          why.empty() ? "" : " (last try: " + why + ")");
    }
    race_info = fmt::format("round {} (re-raced: {}): ", round, plain_line(site_round_why(dir, round), 300)) +
                (!now ? "racing again"
                      : fmt::format("won by job {} at site {}", now->job, now->site) +
                            (relayed ? "; its checkpoint was carried there" : waits));
  }
  race_info += over ? "; the race is over" : coordinator ? fmt::format("; its coordinator runs (pid {})", *coordinator)
                                                         : "; no coordinator runs: `ddpctl coordinate " + id +
                                                               "` runs it";
  rows.push_back({"-", "-", "race", grant ? "WON" : over ? "OVER" : "RACING", race_info, "", true});
  const std::vector<SiteOfRace> record = read_race_sites(dir);
  // Every site at once: one that does not answer holds no other back.
  std::vector<SiteCall> calls = SitePolls::ask_all(sites, record, [&](const SiteOfRace& site) {
    return std::vector<std::string>{"race-gate", id, "--site=" + site.host};
  });
  for (size_t i = 0; i < record.size(); ++i) {
    const SiteOfRace& site = record[i];
    SitePoll p = site_poll_of(dir, site, calls[i]);
    if (!p.reached) {
      // A site left out at its submission (it failed) has nothing more to come.
      rows.push_back({site.name, "-", "-", "UNKNOWN", "not reached: " + p.error, "", p.submission_failed});
      continue;
    }
    if (!p.submitted) {
      rows.push_back({site.name, "-", join(site.labels, ","), "-",
                      p.submission_ended ? fmt::format("nothing submitted there (its submission: {}/site.{}.submit.log)",
                                                       dir, site.name)
                                         : "being submitted to",
                      "", p.submission_ended});
      continue;
    }
    for (const auto& j : p.jobs)
      rows.push_back({site.name, j.id, j.label, j.state, job_info(p, j, grant), p.run, site_job_ended(j)});
  }
  return rows;
}

std::vector<std::string> format_site_rows(const std::string& id, const std::vector<SiteRow>& rows) {
  std::vector<std::vector<std::string>> cells = {{"RUN", "SITE", "JOB", "SHAPE", "STATE", "INFO"}};
  for (const auto& r : rows) cells.push_back({id, r.site, r.job, r.shape, r.state, r.info});
  std::vector<size_t> width(6, 0);
  for (const auto& c : cells)
    for (size_t i = 0; i < 5; ++i) width[i] = std::max(width[i], c[i].size());
  std::vector<std::string> out;
  for (const auto& c : cells) {
    std::string line;
    for (size_t i = 0; i < 5; ++i) line += c[i] + std::string(width[i] - c[i].size() + 2, ' ');
    out.push_back(line + plain_line(c[5], 400));  // the rest was checked as it was read (site_answer)
  }
  return out;
}

StatusFrame site_race_frame(const std::string& id, const std::vector<SiteRow>& rows) {
  StatusFrame f;
  f.lines = format_site_rows(id, rows);
  for (const auto& r : rows) {
    f.keys.push_back(r.site + " " + r.job);
    f.news.push_back(r.state + " " + r.info);
    f.all_done = f.all_done && r.ended;
  }
  return f;
}

WinnerSite winner_site(const std::string& dir, SiteCaller& sites, const std::string& command) {
  const std::string id = fs::path(dir).filename().string();
  std::optional<SiteGrant> grant = read_site_grant(dir);
  if (!grant)
    throw UserError(Location{id}, "",
                    fmt::format("is a race across sites that no job has won yet, so it has no {} here; `ddpctl status "
                                "{}` shows every site's jobs, and `ddpctl {} SITE_RUN --on HOST` one site's",
                                command, id, command));
  for (const auto& site : read_race_sites(dir)) {
    if (site.name != grant->site) continue;
    std::vector<SiteCall> calls = SitePolls::ask_all(sites, {site}, [&](const SiteOfRace& s) {
      return std::vector<std::string>{"race-gate", id, "--site=" + s.host};
    });
    // Checked against the run this race recorded for the site: a site that
    // names another run (this race's own id, another run here) is refused.
    SitePoll p = site_poll_of(dir, site, calls.front());
    if (!p.reached || !p.submitted)
      throw UserError(Location{id}, "",
                      fmt::format("was won by job {} at site {}, which did not say its run there: {}", grant->job,
                                  site.name, p.reached ? "no run there is this race's" : p.error));
    return {site, grant->job, p.run};
  }
  throw UserError(Location{id}, "",
                  fmt::format("was won at site {}, which its record (sites.json) does not name", grant->site));
}

}  // namespace ddpctl
