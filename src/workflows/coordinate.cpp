#include "workflows/coordinate.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sys/file.h>
#include <unistd.h>

#include "base/diagnostics.hpp"
#include "base/files.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

namespace {

// flock on runs/RUN/coordinator.lock, not waiting: held while this runs.
class CoordinatorLock {
 public:
  explicit CoordinatorLock(const std::string& dir) {
    fd_ = ::open((dir + "/coordinator.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ >= 0 && ::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~CoordinatorLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  CoordinatorLock(const CoordinatorLock&) = delete;
  CoordinatorLock& operator=(const CoordinatorLock&) = delete;
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

std::vector<SiteOfRace> read_sites(const nlohmann::json& record) {
  std::vector<SiteOfRace> sites;
  for (const auto& s : record.at("sites"))
    sites.push_back({s.value("name", ""), s.value("host", ""), s.value("remote_dir", ""),
                     s.value("labels", std::vector<std::string>{})});
  return sites;
}

// One line per site, written when it changes: what the log shows of a poll.
std::string summary(const SitePoll& p) {
  if (!p.reached && !p.submission_ended) return "being submitted to (not ready there yet: " + p.error + ")";
  if (!p.reached)
    return "not reached: " + p.error +
           (p.submission_failed ? " (its submission failed too: left out; a job queued there anyway never gets a "
                                  "grant, it stands down held at its gate)"
                                : "");
  if (!p.submitted) return p.submission_ended ? "no run of this race there" : "being submitted to";
  std::vector<std::string> jobs;
  for (const auto& j : p.jobs) jobs.push_back(fmt::format("job {} ({}) {}", j.id, j.label, j.state));
  std::string s = fmt::format("run {}: {}", p.run, join(jobs, ", "));
  for (const auto& e : p.at_gate) s += fmt::format("; job {} at the gate", e.job_id);
  for (const auto& e : p.passed) s += fmt::format("; job {} went through", e.job_id);
  for (const auto& e : p.timeouts) s += fmt::format("; job {} stood down held (no grant in time)", e.job_id);
  if (p.grant) s += "; granted job " + *p.grant;
  if (p.stood_down) s += "; stood down";
  if (!p.error.empty()) s += "; " + p.error;
  return s;
}

std::vector<std::string> words_for(const std::string& id, const SiteAction* a) {
  std::vector<std::string> w = {"race-gate", id};
  if (a && !a->grant.empty()) w.insert(w.end(), {"--grant", a->grant});
  if (a && !a->stand_down.empty()) w.insert(w.end(), {"--stand-down", a->stand_down});
  if (a && a->round >= 2) w.insert(w.end(), {"--round", std::to_string(a->round)});
  if (a && a->open_round >= 2) {
    w.insert(w.end(), {"--open-round", std::to_string(a->open_round), "--because", a->because});
    if (a->resubmit) w.push_back("--resubmit");
  }
  return w;
}

std::string grant_path(const std::string& dir, int round) {
  return round <= 1 ? dir + "/grant" : fmt::format("{}/grant.{}", dir, round);
}

std::optional<SiteGrant> read_grant_file(const std::string& path) {
  std::ifstream in(path);
  SiteGrant g;
  if (!(in >> g.site >> g.job >> g.at)) return std::nullopt;
  return g;
}

// The newest round recorded here (round.N), 1 without one.
int newest_round(const std::string& dir) {
  int n = 1;
  std::error_code ec;
  while (fs::exists(fmt::format("{}/round.{}", dir, n + 1), ec)) ++n;
  return n;
}

RaceRounds read_rounds(const std::string& dir, int most) {
  RaceRounds rr;
  rr.rounds = most;
  rr.round = newest_round(dir);
  rr.grant = read_grant_file(grant_path(dir, rr.round));
  rr.relayed = true;
  if (rr.round >= 2) {
    try {
      auto j = nlohmann::json::parse(read_file(fmt::format("{}/round.{}", dir, rr.round)));
      rr.why = j.value("why", "");
      rr.from_site = j.value("from_site", "");
      rr.from_job = j.value("from_job", "");
    } catch (const std::exception&) {
    }
    if (auto before = read_grant_file(grant_path(dir, rr.round - 1))) rr.checkpoint_site = before->site;
    std::error_code ec;
    rr.relayed = fs::exists(fmt::format("{}/relay.{}", dir, rr.round), ec);
  }
  return rr;
}

// The checkpoint of the site that trained last, to the grantee's site:
// through a file here (the only machine that reaches both).
bool relay_checkpoint(const std::string& dir, const std::string& id, const RaceRounds& rr, const SiteGrant& g,
                      const std::vector<SiteOfRace>& sites, SiteCaller& caller, std::ostream& log) {
  auto site = [&](const std::string& name) -> const SiteOfRace* {
    for (const auto& s : sites)
      if (s.name == name) return &s;
    return nullptr;
  };
  const SiteOfRace* from = site(rr.checkpoint_site);
  const SiteOfRace* to = site(g.site);
  if (!from || !to) return false;
  const std::string file = fmt::format("{}/checkpoint.round.{}.tar", dir, rr.round);
  std::string answer, error;
  bool ok = caller.relay(*from, {"race-checkpoint", id, "--send"}, *to, {"race-checkpoint", id, "--receive"}, file,
                         answer, error);
  std::error_code ec;
  fs::remove(file, ec);
  log << utc_now_iso() << " "
      << (ok ? fmt::format("round {}: the checkpoint went from site {} to site {}: {}", rr.round, from->name, to->name,
                           trim(answer))
             : fmt::format("round {}: the checkpoint could not go from site {} to site {} (tried again at the next "
                           "poll; job {} waits for it): {}",
                           rr.round, from->name, to->name, g.job, error))
      << std::endl;
  if (ok) write_file_atomic(fmt::format("{}/relay.{}", dir, rr.round), trim(answer) + "\n");
  return ok;
}

}  // namespace

std::optional<long> running_coordinator(const std::string& dir) {
  std::error_code ec;
  if (!fs::exists(dir + "/coordinator.lock", ec)) return std::nullopt;
  CoordinatorLock probe(dir);
  if (probe.held()) return std::nullopt;
  long pid = 0;
  std::ifstream(dir + "/coordinator.pid") >> pid;
  return pid;
}

std::optional<SiteGrant> read_site_grant(const std::string& dir) {
  for (int n = newest_round(dir); n >= 1; --n)
    if (auto g = read_grant_file(grant_path(dir, n))) return g;
  return std::nullopt;
}

int site_race_round(const std::string& dir) { return newest_round(dir); }

std::optional<SiteGrant> site_round_grant(const std::string& dir, int n) { return read_grant_file(grant_path(dir, n)); }

std::string site_round_why(const std::string& dir, int n) {
  try {
    return nlohmann::json::parse(read_file(fmt::format("{}/round.{}", dir, n))).value("why", "");
  } catch (const std::exception&) {
    return "";
  }
}

SiteGrant record_site_grant(const std::string& dir, const SiteGrant& grant, int round) {
  const std::string path = grant_path(dir, round);
  write_file_exclusive(path, fmt::format("{} {} {:.3f}\n", grant.site, grant.job, grant.at));
  auto g = read_grant_file(path);
  if (!g) throw UserError(Location{path}, "", "the race's grant cannot be read");
  return *g;
}

int cancel_site_race(const std::string& dir, SiteCaller& caller, std::vector<std::string>& said) {
  const std::string id = fs::path(dir).filename().string();
  const std::string line = fmt::format("cancelled {}", utc_now_iso());
  std::error_code ec;
  if (!fs::exists(dir + "/cancelled", ec)) write_file_atomic(dir + "/cancelled", line + "\n");
  int untold = 0;
  for (const auto& site : read_sites(nlohmann::json::parse(read_file(dir + "/sites.json")))) {
    std::string error;
    std::string answer = caller.call(site, {"race-gate", id, "--stand-down", line}, error);
    SitePoll p;
    if (error.empty()) read_site_answer(answer, p);
    else p.error = error;
    if (!p.reached) {
      ++untold;
      said.push_back(fmt::format("site {}: not reached ({}); the coordinator cancels its jobs when it reaches it",
                                 site.name, p.error));
      continue;
    }
    if (!p.submitted) {
      said.push_back(fmt::format("site {}: no run of this race there", site.name));
      continue;
    }
    std::vector<std::string> jobs;
    nlohmann::json j = nlohmann::json::parse(answer, nullptr, false);
    if (j.is_object() && j.contains("cancelled") && j["cancelled"].is_array())
      for (const auto& job : j["cancelled"]) jobs.push_back("job " + job.get<std::string>());
    said.push_back(fmt::format("site {}: run {} stood down{}{}", site.name, p.run,
                               jobs.empty() ? "; no job of it was left to cancel" : "; cancelled " + join(jobs, ", "),
                               p.error.empty() ? "" : " (" + p.error + ")"));
  }
  return untold;
}

namespace {
using Say = std::function<void(const std::string&)>;

// One call to each site (carrying what the last decision told it); what it
// answered, its log line said when it changed.
std::vector<SitePoll> poll_sites(const std::string& dir, const std::string& id, const std::vector<SiteOfRace>& sites,
                                 const std::map<std::string, SiteAction>& actions, SiteCaller& caller,
                                 std::map<std::string, std::string>& last, const Say& say) {
  std::error_code ec;
  std::vector<SitePoll> polls;
  for (const auto& site : sites) {
    SitePoll p;
    p.name = site.name;
    const std::string rc = fmt::format("{}/site.{}.submit.rc", dir, site.name);
    p.submission_ended = fs::exists(rc, ec);
    p.submission_failed = p.submission_ended && trim(read_file(rc)) != "0";
    auto a = actions.find(site.name);
    std::string error;
    std::string answer = caller.call(site, words_for(id, a == actions.end() ? nullptr : &a->second), error);
    if (error.empty()) read_site_answer(answer, p);
    else p.error = error;
    std::string line = summary(p);
    if (last[site.name] != line) say(fmt::format("site {}: {}", site.name, line));
    last[site.name] = line;
    polls.push_back(std::move(p));
  }
  return polls;
}

// runs/RUN/round.N, once (a coordinator before this one may have written it).
void record_round_opening(const std::string& dir, const RoundOpening& open, const Say& say) {
  nlohmann::json opening = {
      {"why", open.why}, {"from_site", open.from_site}, {"from_job", open.from_job}, {"opened_at", utc_now_iso()}};
  try {
    write_file_exclusive(fmt::format("{}/round.{}", dir, open.round), opening.dump() + "\n");
    say(fmt::format("round {} of the race: {}; site {} opens it first", open.round, open.why, open.from_site));
  } catch (const UserError&) {
    // recorded already
  }
}

// runs/RUN/coordinator.done: when, who won (the newest round's), in which round.
void record_race_over(const std::string& dir, const SiteCaller& caller, const Say& say) {
  nlohmann::json done = {{"ended_at", utc_now_iso()}};
  const std::optional<SiteGrant> g = read_site_grant(dir);
  if (g) done["winner"] = {{"site", g->site}, {"job", g->job}};
  if (site_race_round(dir) > 1) done["round"] = site_race_round(dir);
  write_file_atomic(dir + "/coordinator.done", done.dump() + "\n");
  say("the race is over: " +
      (g ? std::string("its winner went through the gate, and no other site has a job left")
         : std::string("nobody trained")) +
      fmt::format("; {} ssh call(s)", caller.calls()));
}

}  // namespace

int coordinate(const CoordinateRequest& req, SiteCaller& caller, Clock& clock, std::ostream& log) {
  const std::string dir = req.runs_root + "/" + req.id;
  auto say = [&](const std::string& text) { log << utc_now_iso() << " " << text << std::endl; };
  nlohmann::json record = nlohmann::json::parse(read_file(dir + "/sites.json"));
  CoordinatorLock lock(dir);
  if (!lock.held()) {
    say(fmt::format("another coordinator of {} runs (pid {}); this one stops", req.id,
                    running_coordinator(dir).value_or(0)));
    return 0;
  }
  write_file_atomic(dir + "/coordinator.pid", std::to_string(::getpid()) + "\n");
  std::vector<SiteOfRace> sites = read_sites(record);
  const int rounds = std::max(1, record.value("rounds", 1));
  say(fmt::format("coordinating {} across {} site(s), a poll every {} s", req.id, sites.size(), req.poll_s));
  std::map<std::string, SiteAction> actions;
  std::map<std::string, std::string> last;
  const double began = clock.monotonic();
  std::error_code ec;
  for (;;) {
    std::vector<SitePoll> polls = poll_sites(dir, req.id, sites, actions, caller, last, say);
    const bool cancelled = fs::exists(dir + "/cancelled", ec);
    const RaceRounds rr = read_rounds(dir, rounds);
    RoundDecision rd;
    if (cancelled) rd.sites = cancel_sites(polls, trim(read_file(dir + "/cancelled")));
    else rd = decide_rounds(polls, rr, clock.wall());
    SiteDecision& d = rd.sites;
    if (d.new_grant) {
      SiteGrant kept = record_site_grant(dir, *d.new_grant, rr.round);
      if (kept.job != d.new_grant->job || kept.site != d.new_grant->site) {
        RaceRounds again = rr;
        again.grant = kept;  // another coordinator's, recorded first: that one holds
        rd = decide_rounds(polls, again, clock.wall());
      }
    }
    for (const auto& line : d.said) say(line);
    bool acted = d.new_grant.has_value();
    if (rd.relay) {
      RaceRounds now_rr = read_rounds(dir, rounds);
      if (now_rr.grant && relay_checkpoint(dir, req.id, now_rr, *now_rr.grant, sites, caller, log)) acted = true;
    }
    if (rd.open) {
      record_round_opening(dir, *rd.open, say);
      acted = true;
    }
    if (d.done) {
      record_race_over(dir, caller, say);
      return 0;
    }
    actions = d.actions;
    if (req.max_s > 0 && clock.monotonic() - began >= req.max_s) {
      say(fmt::format("stopping after {} s (--for); the race goes on: `ddpctl coordinate {}` resumes it", req.max_s,
                      req.id));
      return 1;
    }
    // While its winner trains and may be requeued, one call every 6 polls.
    const bool watching = rr.grant && d.actions.empty() && !acted && !cancelled && rr.round < rounds;
    if (!acted) clock.sleep(watching ? req.poll_s * 6 : req.poll_s);
  }
}

}  // namespace ddpctl
