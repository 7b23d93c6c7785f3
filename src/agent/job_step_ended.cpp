#include "agent/job_step_ended.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fmt/format.h>
#include <iostream>

#include "agent/job_events.hpp"
#include "agent/job_check.hpp"
#include "agent/job_place.hpp"
#include "agent/log_folder.hpp"
#include "runs/fabric_record.hpp"
#include "agent/node_check.hpp"
#include "agent/straggler.hpp"
#include "agent/watchdog.hpp"
#include "base/diagnostics.hpp"
#include "base/files.hpp"
#include "base/text.hpp"
#include "base/values.hpp"
#include "runs/job_files.hpp"

namespace ddpctl {

namespace {

// A record that cannot be written is said, never stands between the decision and the act.
void save_in_job_record(const std::string& log_base, const InJobRecord& r) {
  try {
    write_file_atomic(in_job_record_path(log_base, r.attempt), in_job_record_json(r).dump(2) + "\n");
  } catch (const std::exception& e) {
    std::cerr << "ddpctl: in-job restart: warning: cannot record it: " << e.what() << '\n';
  }
}

// The watchdog's record of this attempt: a restart it ended this step for
// (watchdog.action restart), or the cancel or requeue it took.
void read_watchdog(const StepEndedOptions& o, int attempt, RestartInput& in) {
  auto stall = read_stall_record(o.log_base);
  if (!stall || stall->attempt != attempt) return;
  if (outcome_action(stall->taken) == StallAction::Restart) {
    // watchdog.action restart ended this step (not an earlier one's record).
    if (stall->step == o.restarts_done && outcome_phase(stall->taken) != OutcomePhase::Failed) {
      std::string who = stall->culprit_named ? stall->culprit : stall->detail.empty() ? "no rank stands out" : stall->detail;
      in.watchdog_stall = fmt::format("stalled {}: {}", format_duration(std::llround(stall->for_s)), who);
      for (const auto& t : stall->stopped) in.watchdog_nodes.push_back(t.node);
    }
  } else {
    in.watchdog_taken = stall->taken;
  }
}

// What failed: the options, srun's lines in the batch log, the node checks',
// the watchdog's and the straggler monitor's records, Slurm's node states.
RestartInput restart_input(const StepEndedOptions& o, int attempt, Context& ctx) {
  RestartInput in;
  in.nodes = o.nodes;
  in.spares = o.spares;
  // A spare the fabric check named is no spare (fabric_check.hpp).
  if (auto f = read_fabric_record(o.log_base, attempt))
    in.spares.erase(std::remove_if(in.spares.begin(), in.spares.end(),
                                   [&](const std::string& n) {
                                     return std::find(f->exclude.begin(), f->exclude.end(), n) != f->exclude.end();
                                   }),
                    in.spares.end());
  in.restarts_done = o.restarts_done;
  in.max_in_job = o.max_in_job;
  in.full_nodes = o.full_nodes;
  in.min_nodes = o.min_nodes;
  in.attempt = attempt;
  in.max_requeues = o.max_requeues;
  in.tasks_are_ranks = o.tasks_are_ranks;
  in.step_rc = o.step_rc;
  revalidate_folder(o.log_base);
  try {
    in.failures = parse_step_end(tail_lines(job_files::batch_err(o.log_base), 1 << 20));
  } catch (const std::exception& e) {
    std::cerr << "ddpctl: in-job restart: warning: cannot read the batch log: " << e.what() << '\n';
  }
  if (o.check_failed) in.check_failed = read_node_checks(o.log_base, o.nodes, 0, ctx).bad_nodes;
  read_watchdog(o, attempt, in);
  if (auto slow = read_slow_record(o.log_base); slow && slow->attempt == attempt && slow->exclude)
    in.slow_nodes = slow->exclude_nodes;
  std::vector<std::string> all = o.nodes;
  all.insert(all.end(), o.spares.begin(), o.spares.end());
  CommandResult show = ctx.runner.run({"scontrol", "show", "node", "-o", join(all, ",")}, std::chrono::seconds(30));
  // scontrol names every node it knows even when it exits non-zero for one it does not.
  in.node_states = parse_node_states(show.out);
  if (!show.ok())
    std::cerr << "ddpctl: in-job restart: warning: the nodes' states are not all known: " << show.describe() << '\n';
  return in;
}

// The decision into the attempt's in-job record: a restart, or the fall-back and why.
void record_decision(const StepEndedOptions& o, int attempt, const RestartDecision& d, Context& ctx) {
  InJobRecord rec = read_in_job_record(o.log_base, attempt).value_or(InJobRecord{});
  rec.attempt = attempt;
  rec.of = o.max_in_job;
  if (o.full_nodes > 0) rec.full_nodes = o.full_nodes;
  if (d.verdict == AgentVerdict::Go) {
    InJobRestart x;
    x.number = o.restarts_done + 1;
    x.kind = d.kind;
    x.cause = d.cause;
    x.text = d.text;
    x.failed = d.failed;
    x.left_out = d.left_out;
    x.taken = d.taken;
    x.nodes = d.nodes;
    x.step_rc = o.step_rc;
    x.decided_at = ctx.clock.wall();
    if (auto at = read_in_job_progress(o.log_base, attempt, o.restarts_done); at && *at <= x.decided_at)
      x.last_progress_at = *at;
    rec.restarts.push_back(x);
  } else {
    rec.fallback = d.verdict == AgentVerdict::Requeue ? "requeue" : "fail";
    rec.fallback_why = d.text;
  }
  save_in_job_record(o.log_base, rec);
}

}  // namespace

namespace {

// The run's events of the decision (job_events.hpp): the nodes left out,
// and the restart on the nodes it takes; a requeue says itself (requeue.sh).
void say_decision(const StepEndedOptions& o, const RestartDecision& d, Context& ctx) {
  const JobEventSource events = job_event_source(ctx.env);
  if (!d.left_out.empty() && d.verdict == AgentVerdict::Go)
    job_event(events, EventType::NodeExcluded, {{"nodes", d.left_out}, {"reason", d.cause}});
  if (d.verdict == AgentVerdict::Go)
    job_event(events, EventType::Restarted,
              {{"restart", o.restarts_done + 1}, {"nodes", d.nodes}, {"taken", d.taken}, {"reason", d.text}});
}

}  // namespace

RestartDecision on_step_ended(const StepEndedOptions& o, Context& ctx) {
  JobPlace place = job_place(ctx.env);
  RestartDecision d = decide_restart(restart_input(o, place.attempt, ctx));
  record_decision(o, place.attempt, d, ctx);
  say_decision(o, d, ctx);
  if (d.verdict == AgentVerdict::Go)
    for (const auto& n : d.nodes) std::remove(node_check_path(o.log_base, place.attempt, n).c_str());
  return d;
}

void on_step_started(const std::string& log_base, int number, Context& ctx) {
  JobPlace place = job_place(ctx.env);
  auto rec = read_in_job_record(log_base, place.attempt);
  if (!rec || number < 1 || number > static_cast<int>(rec->restarts.size()))
    throw UserError(Location{in_job_record_path(log_base, place.attempt)}, "",
                    fmt::format("has no in-job restart {}", number));
  rec->restarts[static_cast<size_t>(number - 1)].started_at = ctx.clock.wall();
  save_in_job_record(log_base, *rec);
}

}  // namespace ddpctl
