#include "workflows/race_gate.hpp"

#include <filesystem>
#include <fmt/format.h>

#include "base/files.hpp"
#include "base/text.hpp"
#include "explain/race.hpp"
#include "runs/race_gate_files.hpp"
#include "runs/jobs.hpp"
#include "workflows/race_again.hpp"
#include "runs/run_store.hpp"

namespace ddpctl {

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

void stand_down_here(const Run& run, const std::string& dir, const RaceGateRequest& req,
                     const std::map<std::string, std::string>& jobs, JobStates& states, nlohmann::json& out,
                     Context& ctx) {
  write_stand_down(dir, req.stand_down);
  std::vector<std::string> active;
  for (const auto& [id, label] : jobs) {
    auto it = states.jobs.find(id);
    if (it == states.jobs.end() || !is_terminal(it->second.state)) active.push_back(id);
  }
  if (active.empty()) return;
  CommandResult r = ctx.slurm.cancel(active);
  if (!r.ok()) {
    out["error"] = "scancel: " + r.describe();
    return;
  }
  out["cancelled"] = active;
  for (const auto& id : active)
    write_file_atomic(fmt::format("{}/cancelled.{}", race_dir(run), id),
                      fmt::format("{} {:.3f}\n", id, ctx.clock.wall()));
}

void grant_here(const GateState& gate, const RaceGateRequest& req, const std::map<std::string, std::string>& jobs,
                JobStates& states, nlohmann::json& out, Context& ctx) {
  // Only a job of this run: the coordinator's word names one it was told of.
  if (!jobs.count(req.grant)) {
    out["error"] = fmt::format("no job {} is of this run here: no grant written", printable(req.grant, 40));
    return;
  }
  GateGrant g = write_grant(gate.round_dir, req.grant, gate.site, ctx.clock.wall());
  if (g.job_id != req.grant) {
    out["error"] = fmt::format("the gate here already granted job {}", g.job_id);
    return;
  }
  // A job that stood down held for want of a grant in time goes on now.
  auto it = states.jobs.find(req.grant);
  bool timed_out = std::any_of(gate.timeouts.begin(), gate.timeouts.end(),
                               [&](const RaceEvent& e) { return e.job_id == req.grant; });
  if (timed_out && it != states.jobs.end() && it->second.state == JobState::Pending) {
    CommandResult r = ctx.slurm.raw({"scontrol", "release", req.grant});
    out["released"] = r.ok();
    if (!r.ok()) out["error"] = "scontrol release " + req.grant + ": " + r.err;
  }
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

// --open-round: see race_gate.hpp.
void open_round_here(Run& run, const GateState& gate, const RaceGateRequest& req, nlohmann::json& out,
                     Context& ctx) {
  out["opened"] = false;
  if (gate.round >= req.open_round) return;  // there already: the requeued job's, or an earlier call's
  if (!req.resubmit && gate.passed.empty()) {
    out["error"] = fmt::format("round {} here has no job through its gate: nothing to race again", gate.round);
    return;
  }
  if (!open_gate_round(run, req.open_round, req.because, ctx.clock.wall())) return;
  out["opened"] = true;
  if (!req.resubmit) return;
  // The round's gate is there before any job of it can start.
  LinesOutput said;
  try {
    RaceAgain again = race_again_for_round(run, req.open_round, req.because, ctx, said);
    if (!again.opened) said.lines.push_back("not raced again: " + again.why_not);
    out["submitted"] = again.submitted;
  } catch (const UserError& e) {
    said.lines.push_back(std::string("error: ") + e.what());
    out["error"] = std::string("the shapes could not be submitted again: ") + e.what();
  }
  out["said"] = said.lines;
}

}  // namespace

nlohmann::json race_gate(const RaceGateRequest& req, Context& ctx) {
  nlohmann::json out = {{"coordinator", req.coordinator}, {"run", nullptr}};
  std::optional<Run> run = race_site_run(req.runs_root, req.coordinator, req.site);
  if (!run) return out;
  out["run"] = run->id;
  GateState gate = read_gate(*run);
  out["site"] = gate.site;
  RaceState race = read_race(*run);
  std::map<std::string, std::string> jobs = race_jobs(race);
  std::vector<std::string> ids;
  for (const auto& [id, label] : jobs) ids.push_back(id);
  JobStates states = lookup_jobs(ctx.slurm, ids);
  if (req.open_round > 0) {
    open_round_here(*run, gate, req, out, ctx);
    gate = read_gate(*run);
    jobs = race_jobs(read_race(*run));
    ids.clear();
    for (const auto& [id, label] : jobs) ids.push_back(id);
    states = lookup_jobs(ctx.slurm, ids);
  }
  if (!req.grant.empty()) {
    if (req.round > 0 && req.round != gate.round)
      out["error"] = fmt::format("round {} is not the newest here (round {}): no grant written", req.round, gate.round);
    else
      grant_here(gate, req, jobs, states, out, ctx);
  }
  if (!req.stand_down.empty() && (req.round == 0 || req.round >= gate.round))
    stand_down_here(*run, gate.round_dir, req, jobs, states, out, ctx);
  gate = read_gate(*run);
  out["round"] = gate.round;
  if (gate.round > 1) out["round_opened"] = gate.opened.empty() ? "job" : "coordinator";
  out["queue_answered"] = states.queue_answered;
  if (!states.error.empty()) out["queue_error"] = states.error;
  nlohmann::json js = nlohmann::json::array();
  for (const auto& [id, label] : jobs) {
    const Job& j = states.jobs.at(id);
    js.push_back({{"job", id},
                  {"label", label},
                  {"state", state_name(j.state)},
                  {"reason", j.reason},
                  {"ended", states.final.count(id) > 0}});
  }
  out["jobs"] = js;
  auto events = [](const std::vector<RaceEvent>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& e : v) a.push_back(event_json(e));
    return a;
  };
  out["at_gate"] = events(gate.at);
  out["passed"] = events(gate.passed);
  out["timeouts"] = events(gate.timeouts);
  out["stood_down"] = events(read_race(*run).stood_down);
  if (gate.grant) out["grant"] = {{"job", gate.grant->job_id}, {"site", gate.grant->site}, {"at", gate.grant->at}};
  if (gate.stand_down) out["stand_down"] = *gate.stand_down;
  return out;
}

}  // namespace ddpctl
