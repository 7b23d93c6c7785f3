#include "sites/coordinate.hpp"

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

#include "runs/events.hpp"
#include "base/diagnostics.hpp"
#include "base/files.hpp"
#include "base/text.hpp"
#include "sites/site_answer.hpp"
#include "sites/site_events.hpp"
#include "sites/site_polls.hpp"
#include "runs/site_records.hpp"

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

// One line per site, written when it changes: what the log shows of a poll.
// Everything in it from the site was checked as it was read (site_answer).
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

std::vector<std::string> words_for(const std::string& id, const SiteOfRace& site, const SiteAction* a,
                                   long long events_after) {
  // --site: the run there that is this site's, where one login host is two
  // sites of the race under two names (an alias and user@host).
  std::vector<std::string> w = {"race-gate", id, "--site=" + site.host};
  // Each value joined to its option: a job id or a line from a site never
  // reads as an option of its own.
  if (a && !a->grant.empty()) w.push_back("--grant=" + a->grant);
  if (a && !a->stand_down.empty()) w.push_back("--stand-down=" + a->stand_down);
  if (a && a->round >= 2) w.push_back("--round=" + std::to_string(a->round));
  if (a && a->open_round >= 2) {
    w.insert(w.end(), {"--open-round=" + std::to_string(a->open_round), "--because=" + a->because});
    if (a->resubmit) w.push_back("--resubmit");
  }
  if (events_after >= 0) w.push_back("--events-after=" + std::to_string(events_after));
  return w;
}

// The checkpoint of the site that trained last, to the grantee's site:
// through a file here (the only machine that reaches both). Run beside the
// polls (Background); returns its log line, and records relay.N (or
// relay.N.error, which `status` shows).
std::string relay_checkpoint(const std::string& dir, const std::string& id, const RaceRounds& rr, const SiteGrant& g,
                             const std::vector<SiteOfRace>& sites, SiteCaller& caller) {
  auto site = [&](const std::string& name) -> const SiteOfRace* {
    for (const auto& s : sites)
      if (s.name == name) return &s;
    return nullptr;
  };
  const SiteOfRace* from = site(rr.checkpoint_site);
  const SiteOfRace* to = site(g.site);
  if (!from || !to) return fmt::format("round {}: site {} or {} is not in sites.json", rr.round, rr.checkpoint_site, g.site);
  const std::string file = fmt::format("{}/checkpoint.round.{}.tar", dir, rr.round);
  std::string answer, error;
  bool ok = caller.relay(*from, {"race-checkpoint", id, "--site=" + from->host, "--send"}, *to,
                         {"race-checkpoint", id, "--site=" + to->host, "--receive"}, file, answer, error);
  std::error_code ec;
  fs::remove(file, ec);
  if (ok) {
    write_file_atomic(fmt::format("{}/relay.{}", dir, rr.round), plain_line(trim(answer), 2000) + "\n");
    return fmt::format("round {}: the checkpoint went from site {} to site {}: {}", rr.round, from->name, to->name,
                       plain_line(trim(answer), 400));
  }
  const std::string why = plain_line(error, 400);
  write_file_atomic(fmt::format("{}/relay.{}.error", dir, rr.round), why + "\n");
  return fmt::format("round {}: the checkpoint could not go from site {} to site {} (tried again at the next poll; "
                     "job {} waits for it): {}",
                     rr.round, from->name, to->name, g.job, why);
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

int cancel_site_race(const std::string& dir, SiteCaller& caller, std::vector<std::string>& said) {
  const std::string id = fs::path(dir).filename().string();
  const std::string line = fmt::format("cancelled {}", utc_now_iso());
  std::error_code ec;
  if (!fs::exists(dir + "/cancelled", ec)) write_file_atomic(dir + "/cancelled", line + "\n");
  const std::vector<SiteOfRace> sites = read_race_sites(dir);
  std::vector<SiteCall> calls = SitePolls::ask_all(caller, sites, [&](const SiteOfRace& site) {
    return std::vector<std::string>{"race-gate", id, "--site=" + site.host, "--stand-down=" + line};
  });
  int untold = 0;
  for (size_t i = 0; i < sites.size(); ++i) {
    const SiteOfRace& site = sites[i];
    SitePoll p = site_poll_of(dir, site, calls[i]);
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
    for (const auto& job : cancelled_jobs_of(calls[i].out)) jobs.push_back("job " + job);
    said.push_back(fmt::format("site {}: run {} stood down{}{}", site.name, p.run,
                               jobs.empty() ? "; no job of it was left to cancel" : "; cancelled " + join(jobs, ", "),
                               p.error.empty() ? "" : " (" + p.error + ")"));
  }
  return untold;
}

namespace {
using Say = std::function<void(const std::string&)>;

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
  try {
    append_event_once(dir, "run_ended", EventType::RunEnded, {{"name", fs::path(dir).filename().string()}});
  } catch (const std::exception& e) {
    say(std::string("warning: the race's end was not written as an event: ") + e.what());
  }
  say("the race is over: " +
      (g ? std::string("its winner went through the gate, and no other site has a job left")
         : std::string("nobody trained")) +
      fmt::format("; {} ssh call(s)", caller.calls()));
}

// A poll waits at most this long for the sites' answers (seconds), and a
// call in flight for less than kSlowAnswer is not said in the log.
constexpr double kAnswerWait = 2;
constexpr double kSlowAnswer = 10;

// The coordinator's state between polls.
struct Coordinator {
  const CoordinateRequest& req;
  std::string dir;
  std::vector<SiteOfRace> sites;
  int rounds = 1;
  SiteCaller& caller;
  Clock& clock;
  Say say;
  std::map<std::string, SiteAction> actions;  // what the last decision tells each site
  std::map<std::string, std::string> last;    // each site's last log line
  SitePolls polls;
  Background relay;
  SiteEventRelay site_events;  // the sites' events into the race's log here

  Coordinator(const CoordinateRequest& r, std::vector<SiteOfRace> s, int n, SiteCaller& c, Clock& k, Say sy)
      : req(r), dir(r.runs_root + "/" + r.id), sites(s), rounds(n), caller(c), clock(k), say(std::move(sy)),
        polls(c, std::move(s)),
        site_events(r.runs_root + "/" + r.id) {}

  // How long a poll waits for the sites' answers: a healthy site answers
  // within it, and a site slower than that is taken at a later poll, so a
  // hung one delays no other's grant by more than this.
  double answer_wait() const { return std::min(std::max(req.poll_s, 0.05), kAnswerWait); }

  // Every site asked at once; at most answer_wait() waited for them.
  std::vector<SitePoll> poll(bool& waited_out) {
    std::vector<SiteCall> calls = polls.ask(
        [&](const SiteOfRace& site) {
          auto a = actions.find(site.name);
          return words_for(req.id, site, a == actions.end() ? nullptr : &a->second, site_events.after(site.name));
        },
        std::chrono::milliseconds(static_cast<long long>(answer_wait() * 1000)));
    std::vector<SitePoll> out;
    waited_out = false;
    for (size_t i = 0; i < sites.size(); ++i) {
      waited_out = waited_out || !calls[i].answered;
      SitePoll p = site_poll_of(dir, sites[i], calls[i]);
      if (calls[i].answered && !calls[i].error.empty()) site_events.refused(p.name, calls[i].error, say);
      // A call in flight for less than a while is a slow answer, not news.
      const bool slow = !calls[i].answered && steady_seconds() - calls[i].asked_at < kSlowAnswer;
      std::string line = summary(p);
      if (!slow && last[p.name] != line) say(fmt::format("site {}: {}", p.name, line));
      if (!slow) last[p.name] = line;
      out.push_back(std::move(p));
    }
    return out;
  }

  // The checkpoint's relay, started beside the polls (once at a time);
  // true when one ended since the last poll.
  bool relay_step(bool wanted) {
    bool acted = false;
    if (auto said = relay.finished()) {
      say(*said);
      acted = true;
    }
    if (wanted && !relay.running()) {
      RaceRounds now = read_rounds(dir, rounds);
      std::error_code ec;
      if (now.grant && !fs::exists(fmt::format("{}/relay.{}", dir, now.round), ec)) {
        // Copies of what it reads: it may outlive this loop (--for).
        relay.run([dir = dir, id = req.id, now, g = *now.grant, sites = sites, &caller = caller] {
          return relay_checkpoint(dir, id, now, g, sites, caller);
        });
      }
    }
    return acted;
  }
};

// The race's events (runs/events.hpp) in its run here: a grant, each site
// told to stand down (once a round), a round opened.
void say_events(const std::string& dir, int round, const SiteDecision& d, const std::optional<RoundOpening>& open) {
  if (d.new_grant)
    append_event_once(dir, fmt::format("granted.{}", round), EventType::Granted,
                      {{"site", d.new_grant->site}, {"job", d.new_grant->job}, {"round", round}});
  for (const auto& [site, a] : d.actions)
    if (!a.stand_down.empty())
      append_event_once(dir, fmt::format("stood_down.{}.{}", site, round), EventType::StoodDown,
                        {{"site", site}, {"round", round}, {"reason", a.stand_down}});
  if (open)
    append_event_once(dir, fmt::format("round_opened.{}", open->round), EventType::RoundOpened,
                      {{"round", open->round}, {"reason", open->why}, {"site", open->from_site}, {"from_job", open->from_job}});
}

}  // namespace

int coordinate(const CoordinateRequest& req, SiteCaller& caller, Clock& clock, std::ostream& log) {
  const std::string dir = req.runs_root + "/" + req.id;
  auto say = [&](const std::string& text) { log << utc_now_iso() << " " << text << std::endl; };
  nlohmann::json record = nlohmann::json::parse(read_file(dir + "/sites.json"), nullptr, false);
  CoordinatorLock lock(dir);
  if (!lock.held()) {
    say(fmt::format("another coordinator of {} runs (pid {}); this one stops", req.id,
                    running_coordinator(dir).value_or(0)));
    return 0;
  }
  write_file_atomic(dir + "/coordinator.pid", std::to_string(::getpid()) + "\n");
  const int rounds =
      record.is_object() && record["rounds"].is_number_integer() ? std::max(1, record["rounds"].get<int>()) : 1;
  Coordinator c(req, read_race_sites(dir), rounds, caller, clock, say);
  say(fmt::format("coordinating {} across {} site(s), a poll every {} s", req.id, c.sites.size(), req.poll_s));
  const double began = clock.monotonic();
  std::error_code ec;
  for (;;) {
    bool waited_out = false;
    std::vector<SitePoll> polls = c.poll(waited_out);
    // What the sites say happened, before what is decided from it.
    c.site_events.relay(polls, say);
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
    try {
      say_events(dir, rr.round, d, rd.open);
    } catch (const std::exception& e) {
      say(std::string("warning: the race's events were not written: ") + e.what());
    }
    bool acted = d.new_grant.has_value();
    if (c.relay_step(rd.relay)) acted = true;
    if (rd.open) {
      record_round_opening(dir, *rd.open, say);
      acted = true;
    }
    if (d.done && !c.relay.running()) {
      record_race_over(dir, caller, say);
      return 0;
    }
    c.actions = d.actions;
    if (req.max_s > 0 && clock.monotonic() - began >= req.max_s) {
      say(fmt::format("stopping after {} s (--for); the race goes on: `ddpctl coordinate {}` resumes it", req.max_s,
                      req.id));
      return 1;
    }
    // While its winner trains and may be requeued, one call every 6 polls.
    // A poll that waited for a site still answering waited its time already.
    const bool watching = rr.grant && d.actions.empty() && !acted && !cancelled && rr.round < rounds;
    const double pause = (watching ? req.poll_s * 6 : req.poll_s) - (waited_out ? c.answer_wait() : 0);
    if (!acted && pause > 0) clock.sleep(pause);
  }
}

}  // namespace ddpctl
