#include "sites/site_race.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "base/text.hpp"
#include "slurm/slurm_job.hpp"

namespace ddpctl {

namespace {

const SiteJob* job_of(const SitePoll& s, const std::string& id) {
  for (const auto& j : s.jobs)
    if (j.id == id) return &j;
  return nullptr;
}

bool active(const SiteJob* j) { return j && !j->ended && j->state != "COMPLETED" && j->state != "CANCELLED" &&
                                       j->state != "FAILED" && j->state != "TIMEOUT" && j->state != "NODE_FAIL" &&
                                       j->state != "OUT_OF_MEMORY" && j->state != "BOOT_FAIL" &&
                                       j->state != "DEADLINE" && j->state != "PREEMPTED"; }

}  // namespace

bool site_job_ended(const SiteJob& j) { return !active(&j); }

namespace {

// Left out of the race: its submission failed and it cannot be reached.
bool left_out(const SitePoll& s) { return !s.reached && s.submission_ended && s.submission_failed; }

bool has_event(const std::vector<RaceEvent>& v, const std::string& id) {
  return std::any_of(v.begin(), v.end(), [&](const RaceEvent& e) { return e.job_id == id; });
}

// The job to grant: waiting at a gate now before one that stood down held,
// then the earliest by its site's clock; none when no job is at a gate.
std::optional<SiteGrant> pick(const std::vector<SitePoll>& sites, double now) {
  struct Candidate {
    bool held;
    double at;
    size_t site;
    std::string job;
  };
  std::vector<Candidate> c;
  for (size_t i = 0; i < sites.size(); ++i) {
    const SitePoll& s = sites[i];
    if (!s.reached || s.stood_down || s.grant) continue;
    for (const auto& e : s.at_gate) {
      const SiteJob* j = job_of(s, e.job_id);
      if (!active(j) || has_event(s.passed, e.job_id)) continue;
      c.push_back({has_event(s.timeouts, e.job_id), e.at, i, e.job_id});
    }
  }
  if (c.empty()) return std::nullopt;
  auto best = std::min_element(c.begin(), c.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(a.held, a.at, a.site) < std::tie(b.held, b.at, b.site);
  });
  return SiteGrant{sites[best->site].name, best->job, now};
}

}  // namespace

SiteDecision decide_sites(const std::vector<SitePoll>& sites, const std::optional<SiteGrant>& granted, double now) {
  SiteDecision d;
  std::optional<SiteGrant> g = granted;
  if (!g) {
    g = pick(sites, now);
    if (!g) {
      d.done = std::all_of(sites.begin(), sites.end(), [](const SitePoll& s) {
        return left_out(s) || (s.reached && s.submission_ended &&
                               std::none_of(s.jobs.begin(), s.jobs.end(), [](const SiteJob& j) { return active(&j); }));
      });
      if (d.done) d.said.push_back("no job reached a gate, and no site has a job left: nobody trained");
      return d;
    }
    d.new_grant = g;
    d.said.push_back(fmt::format("granted job {} at site {}: the first job waiting at a gate", g->job, g->site));
  }
  const std::string line = fmt::format("{} {} {:.3f}", g->site, g->job, g->at);
  bool done = true;
  for (const auto& s : sites) {
    if (s.name == g->site) {
      bool through = s.reached && (has_event(s.passed, g->job) || !active(job_of(s, g->job)));
      if (!through) d.actions[s.name].grant = g->job;
      done = done && through;
      continue;
    }
    bool left = left_out(s) || (s.reached && s.submission_ended && (!s.submitted || s.stood_down) &&
                                std::none_of(s.jobs.begin(), s.jobs.end(), [](const SiteJob& j) { return active(&j); }));
    if (!left) d.actions[s.name].stand_down = line;
    done = done && left;
  }
  d.done = done;
  return d;
}

namespace {

const SitePoll* poll_of(const std::vector<SitePoll>& sites, const std::string& name) {
  for (const auto& s : sites)
    if (s.name == name) return &s;
  return nullptr;
}

bool any_active(const SitePoll& s) {
  return std::any_of(s.jobs.begin(), s.jobs.end(), [](const SiteJob& j) { return active(&j); });
}

// The round's winner went through; is it requeued, or did its run end?
void watch_winner(const std::vector<SitePoll>& sites, const RaceRounds& rr, const SiteGrant& g, RoundDecision& out) {
  const SitePoll* w = poll_of(sites, g.site);
  if (!w || !w->reached) return;  // asked again at the next poll
  if (w->round > rr.round) {
    out.open = RoundOpening{rr.round + 1,
                            fmt::format("a job at site {} started again after a requeue and opened round {} itself",
                                        w->name, rr.round + 1),
                            w->name, ""};
    return;
  }
  if (!any_active(*w)) {
    out.sites.done = true;
    out.sites.said.push_back(fmt::format("the winner's run at site {} ended (round {})", w->name, rr.round));
    return;
  }
  for (auto e = w->passed.rbegin(); e != w->passed.rend(); ++e) {
    const SiteJob* j = job_of(*w, e->job_id);
    if (!j || (j->state != "PENDING" && j->state != "REQUEUE_HOLD")) continue;
    bool said = !j->reason.empty() && j->reason != "None";
    out.open = RoundOpening{rr.round + 1,
                            fmt::format("job {} (shape {}) at site {}, the winner of round {}, was requeued ({}{})",
                                        j->id, j->label.empty() ? e->label : j->label, w->name, rr.round, j->state,
                                        said ? ", " + j->reason : ""),
                            w->name, j->id};
    return;
  }
}

}  // namespace

RoundDecision decide_rounds(const std::vector<SitePoll>& sites, const RaceRounds& rr, double now) {
  RoundDecision out;
  const int r = rr.round;
  // A site not yet in this round is no candidate for its grant.
  std::vector<SitePoll> in_round = sites;
  std::vector<std::string> to_open;
  for (auto& s : in_round)
    if (s.reached && s.round < r) {
      s.stood_down = true;
      if (s.name != rr.from_site) to_open.push_back(s.name);
    }
  std::optional<SiteGrant> granted = rr.grant;
  if (r >= 2 && !granted) {
    const SitePoll* from = poll_of(sites, rr.from_site);
    if (!from || !from->reached) return out;  // the site whose winner was requeued opens first
    if (from->round < r) {
      SiteAction& a = out.sites.actions[from->name];
      a.open_round = r;
      a.because = rr.why;
      return out;
    }
    if (from->round_opened == "job") {
      // Its requeued job started again first and granted itself the round.
      if (!from->grant || from->round != r) return out;
      granted = SiteGrant{from->name, *from->grant, now};
      out.sites = decide_sites(in_round, granted, now);
      out.sites.new_grant = granted;
      out.sites.said.insert(out.sites.said.begin(),
                            fmt::format("round {}: job {} at site {} started again before the re-race and granted "
                                        "itself the round: it goes on there, no other site is raced again",
                                        r, *from->grant, from->name));
    }
  }
  if (!out.sites.new_grant) {
    out.sites = decide_sites(in_round, granted, now);
    if (out.sites.new_grant && r >= 2) out.sites.said.back() += fmt::format(" (round {})", r);
    if (!granted && !out.sites.new_grant && r >= 2) {
      // Opened at the requeued winner's site by this coordinator: the other
      // sites race again, each submitting its shapes anew.
      for (const auto& name : to_open) {
        SiteAction& a = out.sites.actions[name];
        a.open_round = r;
        a.because = rr.why;
        a.resubmit = true;
      }
      out.sites.done = false;
    }
  }
  std::optional<SiteGrant> g = out.sites.new_grant ? out.sites.new_grant : granted;
  for (auto& [name, a] : out.sites.actions)
    if (r >= 2 && (!a.grant.empty() || !a.stand_down.empty())) a.round = r;
  if (g && r >= 2 && !rr.relayed && g->site != rr.checkpoint_site) {
    // The checkpoint is at the site that trained last: it goes to the
    // grantee's before the grant does, once nothing there runs any more.
    out.sites.actions[g->site].grant.clear();
    out.sites.done = false;
    const SitePoll* c = poll_of(sites, rr.checkpoint_site);
    if (c && c->reached && !any_active(*c)) out.relay = true;
    else
      out.sites.said.push_back(fmt::format("round {}: the checkpoint goes from site {} to site {} once no job of "
                                           "the run runs at site {}",
                                           r, rr.checkpoint_site, g->site, rr.checkpoint_site));
  }
  if (out.sites.done && g && r < rr.rounds) {
    out.sites.done = false;
    watch_winner(sites, rr, *g, out);
  }
  return out;
}

SiteDecision cancel_sites(const std::vector<SitePoll>& sites, const std::string& line) {
  SiteDecision d;
  d.done = true;
  for (const auto& s : sites) {
    bool left = left_out(s) || (s.reached && s.submission_ended && (!s.submitted || s.stood_down) &&
                                std::none_of(s.jobs.begin(), s.jobs.end(), [](const SiteJob& j) { return active(&j); }));
    if (!left) d.actions[s.name].stand_down = line;
    d.done = d.done && left;
  }
  if (d.done) d.said.push_back("cancelled: no site has a job of the race left");
  return d;
}

}  // namespace ddpctl
