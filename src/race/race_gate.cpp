#include "race/race_gate.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>

#include "base/files.hpp"
#include "base/text.hpp"
#include "runs/race_contract.hpp"
#include "explain/race.hpp"
#include "runs/race_gate_files.hpp"
#include "runs/job_states.hpp"
#include "race/race_again.hpp"
#include "runs/run_store.hpp"
#include "runs/events.hpp"
#include "status/status.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

namespace {

nlohmann::json event_json(const RaceEvent& e) {
  return {{"job", e.job_id}, {"label", e.label}, {"at", e.at}, {"attempt", e.attempt}};
}

}  // namespace

// Asked every poll: only each run's gate/site.json is read, and the
// matching runs loaded.
std::optional<Run> race_site_run(const std::string& root, const std::string& coordinator, const std::string& site) {
  std::vector<Run> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec))
    if (gate_coordinator(entry.path().string()) == coordinator &&
        (site.empty() || gate_site(entry.path().string()) == site)) try {
        found.push_back(load_run(entry.path().string()));
      } catch (const UserError&) {  // unreadable: skipped, as list_runs does
      }
  if (found.empty()) return std::nullopt;
  sort_runs(found);
  return found.back();
}

namespace {

// Every job of the race here, by generation: id -> label.
std::map<std::string, std::string> race_jobs(const RaceState& race) {
  std::map<std::string, std::string> jobs;
  for (const auto& gen : race.generations)
    for (const auto& [label, id] : gen.job_of_label) jobs[id] = label;
  return jobs;
}

GateView read_view(const Run& run, Context& ctx) {
  GateView v;
  v.gate = read_gate(run);
  v.jobs = race_jobs(read_race(run));
  std::vector<std::string> ids;
  for (const auto& [id, label] : v.jobs) ids.push_back(id);
  v.states = lookup_jobs(ctx.slurm, ids);
  return v;
}

bool gate_has_event(const std::vector<RaceEvent>& events, const std::string& id) {
  return std::any_of(events.begin(), events.end(), [&](const RaceEvent& e) { return e.job_id == id; });
}

// What a resubmission says, kept for the answer (stdout is its JSON).
class LinesOutput : public Output {
 public:
  std::vector<std::string> lines;
  void line(const std::string& text) override { lines.push_back(text); }
  void state_line(const std::string& prefix, const std::string& text, Tone) override { lines.push_back(prefix + text); }
  void raw(const std::string& text) override { lines.push_back(text); }
  void warning(const std::string& text) override { lines.push_back("warning: " + text); }
  void error(const std::string& text) override { lines.push_back("error: " + text); }
  void note(const std::string& text) override { lines.push_back("note: " + text); }
};

// Carries out `plan` at `run` (its gate as `view` read it); what happened
// goes into the answer `out`.
void carry_out(Run& run, const GateView& view, const GatePlan& plan, const RaceGateRequest& req, nlohmann::json& out,
               Context& ctx) {
  if (!plan.error.empty()) {
    out["error"] = plan.error;
    return;
  }
  if (plan.open_round > 0) {
    out["opened"] = open_gate_round(run, plan.open_round, req.because, ctx.clock.wall());
    if (out["opened"] && plan.resubmit) {
      // The round's gate is there before any job of it can start.
      LinesOutput said;
      try {
        RaceAgain again = race_again_for_round(run, plan.open_round, req.because, ctx, said);
        if (!again.opened) said.lines.push_back("not raced again: " + again.why_not);
        out["submitted"] = again.submitted;
      } catch (const UserError& e) {
        said.lines.push_back(std::string("error: ") + e.what());
        out["error"] = std::string("the shapes could not be submitted again: ") + e.what();
      }
      out["said"] = said.lines;
    }
  }
  if (plan.grant) {
    GateGrant g = write_grant(view.gate.round_dir, *plan.grant, view.gate.site, ctx.clock.wall());
    if (g.job_id != *plan.grant) {
      out["error"] = fmt::format("the gate here already granted job {}", g.job_id);
    } else if (plan.release) {
      CommandResult r = ctx.slurm.raw({"scontrol", "release", *plan.grant});
      out["released"] = r.ok();
      if (!r.ok()) out["error"] = "scontrol release " + *plan.grant + ": " + r.err;
    }
  }
  if (plan.stand_down) {
    write_stand_down(view.gate.round_dir, *plan.stand_down);
    if (plan.cancel.empty()) return;
    CommandResult r = ctx.slurm.cancel(plan.cancel);
    if (!r.ok()) {
      out["error"] = "scancel: " + r.describe();
      return;
    }
    out["cancelled"] = plan.cancel;
    for (const auto& id : plan.cancel)
      write_file_atomic(fmt::format("{}/{}{}", race_dir(run), race_file_name(RaceFile::Cancelled), id),
                        cancelled_line(id, ctx.clock.wall()) + "\n");
  }
}

nlohmann::json event_list(const std::vector<RaceEvent>& v) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& e : v) a.push_back(event_json(e));
  return a;
}

// The answer's state: the gate's files and the jobs, as read after the call.
void say_state(const Run& run, const GateView& view, nlohmann::json& out) {
  const GateState& gate = view.gate;
  out["round"] = gate.round;
  if (gate.round > 1) out["round_opened"] = gate.opened.empty() ? "job" : "coordinator";
  out["queue_answered"] = view.states.queue_answered;
  if (!view.states.error.empty()) out["queue_error"] = view.states.error;
  nlohmann::json js = nlohmann::json::array();
  for (const auto& [id, label] : view.jobs) {
    const Job& j = view.states.jobs.at(id);
    js.push_back({{"job", id},
                  {"label", label},
                  {"state", state_name(j.state)},
                  {"reason", j.reason},
                  {"ended", view.states.final.count(id) > 0}});
  }
  out["jobs"] = js;
  out["at_gate"] = event_list(gate.at);
  out["passed"] = event_list(gate.passed);
  out["timeouts"] = event_list(gate.timeouts);
  out["stood_down"] = event_list(read_race(run).stood_down);
  if (gate.grant) out["grant"] = {{"job", gate.grant->job_id}, {"site", gate.grant->site}, {"at", gate.grant->at}};
  if (gate.stand_down) out["stand_down"] = *gate.stand_down;
}

// The run's events after `after`, at most kGateEvents (a site's log may be
// long: read from the line after `after`, in one bounded read). A job that
// ended is written as an event first, as status writes it: no status may
// run at a site, and the coordinator relays the ends too.
void say_events(const Run& run, const GateView& view, long long after, Context& ctx, nlohmann::json& out) {
  bool ended = false;
  for (const auto& [id, job] : view.states.jobs) ended = ended || is_terminal(job.state);
  if (ended) {
    StatusRequest sr;
    sr.runs_root = fs::path(run.dir).parent_path().string();
    sr.targets = {run.dir};
    try {
      collect_status(sr, ctx.slurm, static_cast<long long>(ctx.clock.wall()));
    } catch (const std::exception&) {
      // The ends come at a later call.
    }
  }
  const long long from = offset_after(run.dir, after).value_or(0);
  EventsRead r = read_events(run.dir, from, 1 << 20);
  nlohmann::json list = nlohmann::json::array();
  std::error_code ec;
  const auto size = std::filesystem::file_size(events_path(run.dir), ec);
  bool more = !ec && r.next_offset < static_cast<long long>(size);
  for (auto& e : r.events) {
    if (e.value("seq", 0LL) <= after) continue;
    if (list.size() == kGateEvents) {
      more = true;
      break;
    }
    list.push_back(std::move(e));
  }
  out["events"] = std::move(list);
  out["events_more"] = more;
}

}  // namespace

GateVerb RaceGateRequest::verb() const {
  int n = !grant.empty() + !stand_down.empty() + (open_round > 0);
  if (n > 1)
    throw UserError(Location{"race-gate"}, "",
                    "takes one of --grant, --stand-down and --open-round in a call (the coordinator asks one thing "
                    "of a site at a time)");
  if (!grant.empty()) return GateVerb::Grant;
  if (!stand_down.empty()) return GateVerb::StandDown;
  if (open_round > 0) return GateVerb::OpenRound;
  return GateVerb::Read;
}

GatePlan decide_gate(const GateView& view, const RaceGateRequest& req) {
  GatePlan plan;
  const GateState& gate = view.gate;
  switch (req.verb()) {
    case GateVerb::Read:
      break;
    case GateVerb::OpenRound:
      if (gate.round >= req.open_round) break;  // there already: the requeued job's, or an earlier call's
      if (!req.resubmit && gate.passed.empty()) {
        plan.error = fmt::format("round {} here has no job through its gate: nothing to race again", gate.round);
        break;
      }
      plan.open_round = req.open_round;
      plan.resubmit = req.resubmit;
      break;
    case GateVerb::Grant: {
      if (req.round > 0 && req.round != gate.round) {
        plan.error = fmt::format("round {} is not the newest here (round {}): no grant written", req.round, gate.round);
        break;
      }
      // Only a job of this run: the coordinator's word names one it was told of.
      if (!view.jobs.count(req.grant)) {
        plan.error = fmt::format("no job {} is of this run here: no grant written", printable(req.grant, 40));
        break;
      }
      plan.grant = req.grant;
      auto it = view.states.jobs.find(req.grant);
      plan.release = gate_has_event(gate.timeouts, req.grant) && it != view.states.jobs.end() &&
                     it->second.state == JobState::Pending;
      break;
    }
    case GateVerb::StandDown:
      if (req.round > 0 && req.round < gate.round) break;  // an older round's: nothing to do
      plan.stand_down = req.stand_down;
      for (const auto& [id, label] : view.jobs) {
        auto it = view.states.jobs.find(id);
        if (it == view.states.jobs.end() || !is_terminal(it->second.state)) plan.cancel.push_back(id);
      }
      break;
  }
  return plan;
}

nlohmann::json race_gate(const RaceGateRequest& req, Context& ctx) {
  req.verb();  // one verb, or refused before anything is read
  nlohmann::json out = {{"coordinator", req.coordinator}, {"run", nullptr}};
  std::optional<Run> run = race_site_run(req.runs_root, req.coordinator, req.site);
  if (!run) return out;
  out["run"] = run->id;
  GateView view = read_view(*run, ctx);
  out["site"] = view.gate.site;
  if (req.open_round > 0) out["opened"] = false;
  carry_out(*run, view, decide_gate(view, req), req, out, ctx);
  // The answer says the state after the call: read again.
  const GateView after = read_view(*run, ctx);
  say_state(*run, after, out);
  if (req.events_after >= 0) say_events(*run, after, req.events_after, ctx, out);
  return out;
}

}  // namespace ddpctl
