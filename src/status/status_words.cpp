#include "status/status_words.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "explain/mfu.hpp"
#include "explain/report.hpp"
#include "explain/usage_account.hpp"
#include "runs/fabric_record.hpp"
#include "runs/in_job_record.hpp"
#include "runs/slow_record.hpp"
#include "runs/stall_record.hpp"
#include "base/files.hpp"
#include "base/text.hpp"
#include "explain/cell_files.hpp"
#include "explain/failure.hpp"
#include "explain/requeue.hpp"
#include "runs/job_files.hpp"
#include "runs/progress_read.hpp"
#include "runs/usage.hpp"
#include "slurm/reasons.hpp"
#include "agent/usage_hints.hpp"

namespace ddpctl {

namespace {

std::optional<Explanation> words(std::string text) {
  Explanation e;
  e.text = std::move(text);
  return e;
}

// A running job of a run whose shape is known: what its agent left is read.
bool running_here(const JobFacts& f) { return f.job.state == JobState::Running && f.ref.run && f.ref.attempt; }
bool watched(const JobFacts& f) { return running_here(f) && f.shape; }
std::string base_of(const JobFacts& f) { return log_base(*f.shape, f.job.id); }

// Slurm's reason and the exit, for a job neither pending nor running in a
// run. A job cancelled while pending keeps its last pending reason
// ("Resources"): not news.
std::optional<Explanation> slurm_words(const JobFacts& f) {
  const Job& job = f.job;
  if (job.state == JobState::Pending || running_here(f) || job.state == JobState::Cancelled) return std::nullopt;
  std::string info = explain_reason(job.reason);
  if (std::string how = describe_exit(job.exit); !how.empty()) info += (info.empty() ? "" : "; ") + how;
  return words(info);
}

std::optional<Explanation> pending_words(const JobFacts& f) {
  if (f.job.state != JobState::Pending) return std::nullopt;
  std::string info = explain_reason(f.job.reason);
  if (f.job.start_time && *f.job.start_time > f.now)
    info += (info.empty() ? "" : "; ") + std::string("starts in ~") + format_duration(*f.job.start_time - f.now);
  return words(info);
}

// The program's own progress file (the bundled trainer writes one), else
// the spec's pattern over its log.
std::optional<Explanation> progress_words(const JobFacts& f) {
  if (!watched(f)) return std::nullopt;
  const RunShape& s = *f.shape;
  auto p = read_progress(progress_path(s.output_dir, s.job_name, f.job.id));
  if (!p) p = pattern_progress(s, f.job, f.now);
  if (!p) return std::nullopt;
  Explanation e;
  e.text = format_progress(*p);
  auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  e.json["progress"] = {{"epoch", p->epoch}, {"epochs", p->epochs}, {"step", p->step}, {"steps", p->steps},
                        {"samples_per_s", p->samples_per_s}, {"it_per_s", p->it_per_s}, {"loss", opt(p->loss)},
                        {"eta_s", p->eta_s}, {"source", p->source}};
  return e;
}

// The latest usage samples of every node, and the guides' troubleshooting
// over the last minutes (docs/running.md).
std::optional<Explanation> usage_words(const JobFacts& f) {
  if (!watched(f)) return std::nullopt;
  // The last 256 KiB of each node's samples: the latest, and the minutes the hints look at.
  auto samples = read_usage(base_of(f), f.job.requeues, 256 << 10);
  const double now = static_cast<double>(f.now);
  Explanation e;
  std::vector<std::string> parts;
  if (auto u = usage_now(samples)) {
    std::string text = format_usage(*u);
    // Samples come every few seconds; an old one means the sampler (or its node) stopped.
    if (now - u->t > 60) text += fmt::format(" (as of {} ago)", format_duration(std::llround(now - u->t)));
    parts.push_back(text);
    e.json["usage"] = usage_json(*u, now);
  }
  nlohmann::json hints = nlohmann::json::array();
  for (const auto& h : usage_hints(samples, now)) {
    parts.push_back(h.text);
    hints.push_back({{"kind", h.kind}, {"node", h.node}, {"text", h.text}});
  }
  if (!hints.empty()) e.json["hints"] = hints;
  e.text = join(parts, "; ");
  return e;
}

// A rank that keeps the others waiting (straggler.hpp), named by the watchdog.
std::optional<Explanation> slow_words(const JobFacts& f) {
  if (!watched(f)) return std::nullopt;
  auto r = read_slow_record(base_of(f));
  if (!r || r->attempt != f.job.requeues) return std::nullopt;
  Explanation e;
  e.json["slow"] = slow_record_json(*r);
  if (std::string slow = describe_slow(*r, static_cast<double>(f.now)); !slow.empty()) e.text = "slow: " + slow;
  return e;
}

// The fabric check before the attempt's training (fabric_check.hpp): its
// figure and, below a level, what it named and left out.
// An ended job's too: what it trained on, and why.
std::optional<Explanation> fabric_words(const JobFacts& f) {
  if (!f.shape || f.job.state == JobState::Pending) return std::nullopt;
  auto r = read_fabric_record(base_of(f), f.job.requeues);
  if (!r) return std::nullopt;
  Explanation e;
  e.text = "fabric: " + r->text;
  e.json["fabric"] = fabric_record_json(*r);
  return e;
}

// What an ended job used, training and lost (usage_account.hpp), from its
// attempts as the ledger or sacct keep them.
std::optional<Explanation> account_words(const JobFacts& f) {
  if (!f.extras.named || !f.shape || !is_terminal(f.job.state) || f.job.array_task_id || !f.job.start_time)
    return std::nullopt;
  std::vector<Job> attempts = f.extras.earlier(f.job);
  attempts.push_back(f.job);
  std::string base = base_of(f);
  UsageAccount a = account_usage(attempt_facts(base, job_files::metrics(base), attempts), f.shape->nodes);
  if (a.attempts == 0) return std::nullopt;
  if (MetricsFile m = read_metrics(job_files::metrics(base)); !m.epochs.empty()) {
    Mfu mfu = model_flops_utilisation(*f.shape, m.epochs.back(), mean_throughput(m));
    a.mfu = mfu.value;
    a.mfu_words = mfu.words;
  }
  // In the JSON, and on a line of its own under the table (status_watch.cpp).
  Explanation e;
  e.json["account"] = account_json(a);
  // With its MFU (report says it on a line of its own).
  e.json["account"]["text"] = describe_account(a) + (a.mfu_words.empty() ? "" : "; MFU " + a.mfu_words);
  return e;
}

// Why the agent watches nothing (agent.sh).
std::optional<Explanation> monitor_off_words(const JobFacts& f) {
  if (!watched(f)) return std::nullopt;
  try {
    std::string off = read_file(job_files::monitor_off(base_of(f), f.job.requeues), 4096);
    while (!off.empty() && off.back() == '\n') off.pop_back();
    Explanation e;
    e.text = "not monitored: " + plain_line(off, 160);
    e.json["monitor_off"] = off;
    return e;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The job agent's own errors, which the script let the job outlive (agent.sh).
std::optional<Explanation> agent_error_words(const JobFacts& f) {
  if (!watched(f)) return std::nullopt;
  std::vector<std::string> errors;
  try {
    errors = split(read_file(job_files::agent_error(base_of(f), f.job.requeues), 8192), '\n');
  } catch (const std::exception&) {
    return std::nullopt;
  }
  errors.erase(std::remove(errors.begin(), errors.end(), ""), errors.end());
  if (errors.empty()) return std::nullopt;
  std::vector<std::string> parts;
  for (const auto& e : errors) parts.push_back("agent error: " + plain_line(e, 160));
  Explanation e;
  e.text = join(parts, "; ");
  e.json["agent_errors"] = errors;
  return e;
}

// A stall the watchdog found. One it ended the step for (action: restart)
// is over: the in-job restart's record says what followed.
std::optional<Explanation> stall_words(const JobFacts& f) {
  if (!watched(f)) return std::nullopt;
  auto r = read_stall_record(base_of(f));
  if (!r || r->attempt != f.job.requeues) return std::nullopt;
  Explanation e;
  e.json["stall"] = stall_record_json(*r);
  if (r->stalled && r->taken != WatchdogOutcome::Restarted) {
    e.state = "STALLED";
    e.tone = Tone::Bad;
    e.text = describe_stall(*r, std::max(r->for_s, static_cast<double>(f.now) - r->since));
  }
  return e;
}

// Ending after its watchdog's scancel: squeue shows COMPLETING, and its
// exit the SIGTERM, until the step's processes are gone (torchrun takes
// seconds); the stall is why, as once it is CANCELLED.
std::optional<Explanation> watchdog_cancelling_words(const JobFacts& f) {
  if (!f.shape || f.job.state != JobState::Completing) return std::nullopt;
  auto r = read_stall_record(base_of(f));
  if (!r || r->attempt != f.job.requeues ||
      (r->taken != WatchdogOutcome::Cancelled && r->taken != WatchdogOutcome::Cancelling))
    return std::nullopt;
  return words("was cancelled by the watchdog: " + describe_stall(*r));
}

// Which rank failed first, where, how, and its last words (failure.hpp: the
// node check, a lost node, the watchdog's cancel and its culprit are its
// kinds). A race's loser was cancelled by the winner: not a failure.
std::optional<Explanation> failure_words(const JobFacts& f) {
  const Job& job = f.job;
  bool race_loser = f.ref.run && job.state == JobState::Cancelled &&
                    (f.race ? f.race->is_race : read_race(*f.ref.run).is_race);
  if (!f.shape || !is_terminal(job.state) || job.state == JobState::Completed || race_loser) return std::nullopt;
  auto failure = f.extras.failure(*f.shape, job);
  if (!failure) return std::nullopt;
  Explanation e;
  e.text = describe_failure(*failure);
  e.json["failure"] = failure_json(*failure);
  if (job.state == JobState::Preempted) {
    // Slurm ended it by a preemption, not requeued (a partition whose
    // preemption cancels): by whom, when, and what would have saved it.
    std::string by = f.extras.preemptor(job);
    std::string said = "; preempted" + (by.empty() ? std::string() : " by " + by);
    if (job.start_time && job.end_time && *job.end_time >= *job.start_time)
      said += " after " + format_duration(static_cast<double>(*job.end_time - *job.start_time));
    said += " and cancelled, not requeued: ";
    said += f.shape->max_requeues > 0
                ? "its script's own requeue did not come within the partition's grace (its log says how far it got)"
                : "the run ended there. With `requeue:` in the spec ddpctl requeues the job itself within the "
                  "partition's grace, and it resumes from its checkpoint";
    e.text += said;
    if (!by.empty()) e.json["preempted_by"] = by;
  }
  return e;
}

// "attempt 2 of 3 (requeued at the time limit)".
std::optional<Explanation> requeue_words(const JobFacts& f) {
  if (!f.shape) return std::nullopt;
  auto rq = find_requeue(
      *f.shape, f.job, [&] { return f.extras.earlier(f.job); },
      [&](const Job& attempt) { return f.extras.preemptor(attempt); });
  if (!rq) return std::nullopt;
  Explanation e;
  e.text = rq->describe();
  e.json["attempt"] = {{"number", rq->attempt},
                       {"of", rq->of ? nlohmann::json(*rq->of) : nlohmann::json()},
                       {"why", rq->why},
                       {"details", rq->details}};
  return e;
}

// The attempt's in-job restarts (restart:): the latest, and the fallback when none was left.
std::optional<Explanation> in_job_words(const JobFacts& f) {
  if (!f.shape || f.job.state == JobState::Pending) return std::nullopt;
  auto r = read_in_job_record(base_of(f), f.job.requeues);
  if (!r) return std::nullopt;
  Explanation e;
  e.text = describe_in_job(*r);
  e.json["in_job"] = in_job_record_json(*r);
  return e;
}

// A job of a race group: whether it won or lost, and in which generation
// once the group has re-raced.
std::string race_note(const RaceState& race, const std::string& id) {
  size_t n = race.generations.size();
  if (race.winner() && race.winner()->job_id == id)
    return n > 1 ? fmt::format("race winner of generation {}", n) : "race winner";
  // The newest generation it was submitted into, and how it lost that one.
  const RaceGeneration* member = &race.generations.back();
  for (const auto& g : race.generations)
    for (const auto& [label, job] : g.job_of_label)
      if (job == id) member = &g;
  std::string how;
  for (const auto& e : race.stood_down)
    if (e.job_id == id) how = ": started, found the group claimed, stood down without training";
  for (const auto& e : race.cancelled)
    if (e.job_id == id && how.empty()) how = ": cancelled by the winner";
  bool lost = !how.empty() || (member->winner && member->winner->job_id != id);
  std::string loss;
  if (lost) loss = (n > 1 ? fmt::format("lost generation {}", member->number) : std::string("lost the race")) + how;
  if (const RaceGeneration* won = generation_won_by(race, id))
    return fmt::format("won generation {}, then requeued{}", won->number, loss.empty() ? "" : "; " + loss);
  return loss;
}

std::optional<Explanation> race_words(const JobFacts& f) {
  if (!f.race || !f.race->is_race) return std::nullopt;
  std::string note = race_note(*f.race, f.ref.job_id.empty() ? "-" : f.ref.job_id);
  if (note.empty()) return std::nullopt;
  Explanation e;
  e.text = note;
  e.json["race"] = note;
  return e;
}

// A raced grid's first cell: where its race stands.
std::optional<Explanation> grid_race_words_of(const JobFacts& f) {
  if (!f.cell || !f.cells || !f.ref.run || !f.ref.run->grid || f.cell->cell->index != 0 || !f.ref.run->grid->raced)
    return std::nullopt;
  Explanation e;
  e.text = grid_race_words(*f.ref.run, *f.cells);
  e.json["race"] = e.text;
  return e;
}

// A grid cell's last metric, from its files (cell_files.hpp): no Slurm call.
std::optional<Explanation> metric_words(const JobFacts& f) {
  if (!f.cell || !f.ref.run) return std::nullopt;
  auto m = cell_metric_view(*f.ref.run, *f.cell);
  if (!m) return std::nullopt;
  Explanation e;
  e.text = m->text;
  e.json["metric"] = m->json;
  return e;
}

}  // namespace

const std::vector<ExplanationSource>& status_explanations() {
  static const std::vector<ExplanationSource> table = {
      {"cell metric", Combine::Appends, metric_words},
      {"grid race", Combine::Prefixes, grid_race_words_of},
      {"race", Combine::Prefixes, race_words},
      {"in-job restart", Combine::Prefixes, in_job_words},
      {"requeue", Combine::Prefixes, requeue_words},
      {"failure", Combine::Replaces, failure_words},
      {"watchdog cancelling", Combine::Replaces, watchdog_cancelling_words},
      {"stall", Combine::Prefixes, stall_words},
      {"usage account", Combine::Appends, account_words},
      {"fabric check", Combine::Appends, fabric_words},
      {"agent errors", Combine::Appends, agent_error_words},
      {"not monitored", Combine::Appends, monitor_off_words},
      {"slow rank", Combine::Appends, slow_words},
      {"usage", Combine::Appends, usage_words},
      {"progress", Combine::Replaces, progress_words},
      {"pending", Combine::Replaces, pending_words},
      {"Slurm's reason and exit", Combine::Replaces, slurm_words},
  };
  return table;
}

JobWords explain_job(const JobFacts& facts) {
  JobWords out;
  const auto& table = status_explanations();
  for (auto source = table.rbegin(); source != table.rend(); ++source) {
    std::optional<Explanation> e = source->explain(facts);
    if (!e) continue;
    out.json.update(e->json);
    if (!e->state.empty()) out.state = e->state, out.tone = e->tone;
    if (e->text.empty()) continue;
    switch (source->combine) {
      case Combine::Replaces:
        out.info = e->text;
        break;
      case Combine::Prefixes:
        out.info = e->text + (out.info.empty() ? "" : "; " + out.info);
        break;
      case Combine::Appends:
        out.info = out.info.empty() ? e->text : out.info + "; " + e->text;
        break;
    }
  }
  return out;
}

std::string grid_race_words(const Run& run, const std::vector<CellState>& cells) {
  if (!run.grid || !run.grid->raced || cells.empty()) return "";
  const CellState& first = cells.front();
  if (!first.racing.empty()) {
    std::vector<std::string> shapes;
    for (const Attempt* a : first.racing) shapes.push_back(fmt::format("{} (job {})", a->shape, a->job_id));
    return fmt::format("cell {} races shapes {}: the first to start trains it, and the other {} cell(s) run on its "
                       "shape",
                       first.cell->name, join(shapes, ", "), cells.size() - 1);
  }
  RaceState race = read_race(run);
  if (race.generations.empty() || !race.generations.front().winner) return "";
  const RaceEvent& won = *race.generations.front().winner;
  return fmt::format("cell {}'s race won by shape {} (job {})", first.cell->name, won.label, won.job_id);
}

}  // namespace ddpctl
