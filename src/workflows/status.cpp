#include "workflows/status.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <fmt/format.h>
#include <map>
#include <set>
#include <tuple>

#include "explain/cell_files.hpp"
#include "runs/job_files.hpp"
#include "agent/in_job_restart.hpp"
#include "explain/experiments.hpp"
#include "script/snapshot_record.hpp"
#include "base/files.hpp"
#include "explain/failure.hpp"
#include "agent/job_environment.hpp"
#include "runs/jobs.hpp"
#include "runs/progress_read.hpp"
#include "explain/race.hpp"
#include "slurm/reasons.hpp"
#include "script/runs.hpp"
#include "script/runs_index.hpp"
#include "explain/status_grid.hpp"
#include "workflows/submit.hpp"
#include "base/text.hpp"
#include "runs/usage.hpp"
#include "agent/straggler.hpp"
#include "agent/watchdog.hpp"

namespace ddpctl {

namespace {

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// An attempt that made no job: rejected, unconfirmed, absent, or only intended.
StatusRow attempt_row(const JobRef& ref) {
  StatusRow row;
  row.run = ref.run->id;
  row.job = "-";
  row.shape = ref.attempt->shape;
  Outcome o = ref.attempt->outcome;
  row.state = o == Outcome::Intent ? "UNCONFIRMED" : upper(outcome_name(o));
  row.tone = o == Outcome::Rejected ? Tone::Bad : o == Outcome::Absent ? Tone::Muted : Tone::Unknown;
  row.info = printable(ref.attempt->reason, 70);
  row.json = {{"run", ref.run->id}, {"job_id", ""}, {"shape", row.shape}, {"state", row.state},
              {"reason", ref.attempt->reason}};
  return row;
}

// A running job as its job agent sees it (docs/running.md): a stall the
// watchdog found, the latest usage samples of every node, the guides'
// troubleshooting over the last minutes, or why nothing is watched.
void add_running_view(const RunShape& shape, const Job& job, long long now, StatusRow& row, nlohmann::json& j) {
  std::string base = log_base(shape, job.id);
  std::vector<std::string> parts;
  if (!row.info.empty()) parts.push_back(row.info);
  // The last 256 KiB of each node's samples: the latest, and the minutes the hints look at.
  auto samples = read_usage(base, job.restarts, 256 << 10);
  if (auto u = usage_now(samples)) {
    std::string text = format_usage(*u);
    // Samples come every few seconds; an old one means the sampler (or its node) stopped.
    if (static_cast<double>(now) - u->t > 60)
      text += fmt::format(" (as of {} ago)", format_duration(std::llround(static_cast<double>(now) - u->t)));
    parts.push_back(text);
    j["usage"] = usage_json(*u, static_cast<double>(now));
  }
  nlohmann::json hints = nlohmann::json::array();
  for (const auto& h : usage_hints(samples, static_cast<double>(now))) {
    parts.push_back(h.text);
    hints.push_back({{"kind", h.kind}, {"node", h.node}, {"text", h.text}});
  }
  if (!hints.empty()) j["hints"] = hints;
  if (auto r = read_stall_record(base); r && r->attempt == job.restarts) {
    j["stall"] = stall_record_json(*r);
    // A stall the watchdog ended the step for (action: restart) is over: the
    // in-job restart's record says what followed.
    if (r->stalled && r->taken != WatchdogOutcome::Restarted) {
      row.state = "STALLED";
      row.tone = Tone::Bad;
      parts.insert(parts.begin(), describe_stall(*r, std::max(r->for_s, static_cast<double>(now) - r->since)));
    }
  }
  // A rank that keeps the others waiting (straggler.hpp), named by the watchdog.
  if (auto r = read_slow_record(base); r && r->attempt == job.restarts) {
    j["slow"] = slow_record_json(*r);
    if (std::string slow = describe_slow(*r, static_cast<double>(now)); !slow.empty()) parts.push_back("slow: " + slow);
  }
  try {
    std::string off = read_file(job_files::monitor_off(base, job.restarts), 4096);
    while (!off.empty() && off.back() == '\n') off.pop_back();
    parts.push_back("not monitored: " + plain_line(off, 160));
    j["monitor_off"] = off;
  } catch (const std::exception&) {
  }
  // The job agent's own errors, which the script let the job outlive (agent.sh).
  try {
    std::vector<std::string> errors = split(read_file(job_files::agent_error(base, job.restarts), 8192), '\n');
    errors.erase(std::remove(errors.begin(), errors.end(), ""), errors.end());
    for (const auto& e : errors) parts.push_back("agent error: " + plain_line(e, 160));
    if (!errors.empty()) j["agent_errors"] = errors;
  } catch (const std::exception&) {
  }
  row.info = join(parts, "; ");
}

// sacct --duplicates' records of arrays (tasks and collapsed pending
// records, every task in the order its attempts were submitted): each
// task's latest record (its current attempt, its restart count that of its
// earlier ones) and its earlier attempts by its own job id. An earlier
// record under another job name is another job's that once had the same
// ids (a cluster whose ids started again): left out.
struct TaskAttempts {
  std::vector<Job> latest;
  std::map<std::string, std::vector<Job>> earlier;
};
TaskAttempts task_attempts(std::vector<Job> records) {
  TaskAttempts out;
  std::map<std::tuple<std::string, int, std::string>, std::vector<Job>> tasks;
  for (Job& j : records) {
    if (!j.array_task_id) {
      out.latest.push_back(std::move(j));
      continue;
    }
    tasks[{j.array_job_id, *j.array_task_id, j.id}].push_back(std::move(j));
  }
  for (auto& [key, list] : tasks) {
    std::stable_sort(list.begin(), list.end(),
                     [](const Job& a, const Job& b) { return a.submit_time.value_or(0) < b.submit_time.value_or(0); });
    Job latest = std::move(list.back());
    list.pop_back();
    std::vector<Job>& earlier = out.earlier[latest.id];
    for (Job& j : list)
      if (j.name == latest.name) earlier.push_back(std::move(j));
    // sacct has no restart count; its records of the task do.
    latest.restarts = std::max(latest.restarts, static_cast<int>(earlier.size()));
    out.latest.push_back(std::move(latest));
  }
  return out;
}

// What a job row needs from Slurm beyond the job itself: the earlier
// attempts of a requeued job, who cancelled a job, whose node a NODE_FAIL
// lost. A job whose end is recorded has them in its ledger (JobEnd), a job
// sacct answered for in this refresh came with them; only a job squeue still
// shows asks, when its row needs it (the nodes once per refresh).
class Extra {
 public:
  Extra(SlurmClient& slurm, const JobStates& states) : slurm_(slurm), states_(states) {}

  std::optional<Failure> failure(const RunShape& shape, const Job& job) {
    return explain_failure(shape, job, states_, slurm_, &nodes_);
  }

  std::vector<Job> earlier(const Job& job) {
    if (auto e = states_.ends.find(job.id); e != states_.ends.end()) return e->second.earlier;
    if (auto e = states_.earlier.find(job.id); e != states_.earlier.end()) return e->second;
    if (!job.array_task_id) {
      std::vector<Job> all = slurm_.attempts(job.id).jobs;
      if (!all.empty()) all.pop_back();  // the current attempt
      return all;
    }
    // An array task as <array>_<task>: its own id may be the array's, for
    // which sacct answers every task's records, in the order they were
    // (re)submitted.
    auto split = task_attempts(slurm_.attempts(fmt::format("{}_{}", submission_id(job), *job.array_task_id)).jobs);
    auto e = split.earlier.find(job.id);
    return e == split.earlier.end() ? std::vector<Job>() : e->second;
  }

 private:
  SlurmClient& slurm_;
  const JobStates& states_;
  std::optional<std::vector<NodeInfo>> nodes_;
};

StatusRow job_row(const JobRef& ref, const Job& job, long long now, Extra& extra) {
  StatusRow row;
  row.run = ref.run ? ref.run->id : "-";
  row.job = ref.job_id.empty() ? "-" : ref.job_id;
  row.shape = ref.attempt ? ref.attempt->shape : "-";
  nlohmann::json j = {{"run", ref.run ? ref.run->id : ""}, {"job_id", ref.job_id}, {"shape", row.shape == "-" ? "" : row.shape}};
  if (ref.run) {
    // The code the job runs (snapshot.json), null for runs from before snapshots.
    std::string code = snapshot_record(ref.run->dir);
    auto parsed = nlohmann::json::parse(code.empty() ? "null" : code, nullptr, false);
    j["code"] = parsed.is_discarded() ? nlohmann::json() : parsed;
    j["ddpctl"] = ref.run->ddpctl_version.empty() ? nlohmann::json() : nlohmann::json(ref.run->ddpctl_version);
  }
  row.state = state_name(job.state);
  row.tone = tone_of(job.state);
  std::string why = explain_reason(job.reason);
  if (job.state == JobState::Pending) {
    row.info = why;
    if (job.start_time && *job.start_time > now)
      row.info += (row.info.empty() ? "" : "; ") + std::string("starts in ~") + format_duration(*job.start_time - now);
  } else if (job.state == JobState::Running && ref.run && ref.attempt) {
    if (const RunShape* s = ref.run->shape(ref.attempt->shape)) {
      // The program's own progress file (the bundled trainer writes one), else the spec's pattern over its log.
      auto p = read_progress(progress_path(s->output_dir, s->job_name, job.id));
      if (!p) p = pattern_progress(*s, job, now);
      if (p) {
        row.info = format_progress(*p);
        auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
        j["progress"] = {{"epoch", p->epoch}, {"epochs", p->epochs}, {"step", p->step}, {"steps", p->steps},
                         {"samples_per_s", p->samples_per_s}, {"it_per_s", p->it_per_s}, {"loss", opt(p->loss)},
                         {"eta_s", p->eta_s}, {"source", p->source}};
      }
      add_running_view(*s, job, now, row, j);
    }
  } else if (job.state != JobState::Cancelled) {
    // A job cancelled while pending keeps its last pending reason ("Resources"): not news.
    row.info = why;
    if (std::string how = describe_exit(job.exit); !how.empty()) row.info += (row.info.empty() ? "" : "; ") + how;
  }
  const RunShape* shape = ref.run && ref.attempt ? ref.run->shape(ref.attempt->shape) : nullptr;
  // Ending after its watchdog's scancel: squeue shows COMPLETING, and its
  // exit the SIGTERM, until the step's processes are gone (torchrun takes
  // seconds); the stall is why, as once it is CANCELLED.
  if (shape && job.state == JobState::Completing)
    if (auto r = read_stall_record(log_base(*shape, job.id));
        r && r->attempt == job.restarts && (r->taken == WatchdogOutcome::Cancelled || r->taken == WatchdogOutcome::Cancelling))
      row.info = "was cancelled by the watchdog: " + describe_stall(*r);
  bool race_loser = ref.run && job.state == JobState::Cancelled && read_race(*ref.run).is_race;
  if (shape && is_terminal(job.state) && job.state != JobState::Completed && !race_loser) {
    // Which rank failed first, where, how, and its last words.
    if (auto f = extra.failure(*shape, job)) {
      row.info = describe_failure(*f);
      j["failure"] = failure_json(*f);
    }
  }
  if (shape)
    if (auto rq = find_requeue(*shape, job, [&] { return extra.earlier(job); })) {
      row.info = rq->describe() + (row.info.empty() ? "" : "; " + row.info);
      j["attempt"] = {{"number", rq->attempt}, {"of", rq->of ? nlohmann::json(*rq->of) : nlohmann::json()},
                      {"why", rq->why}};
    }
  // The attempt's in-job restarts (restart:): the latest, and the fallback when none was left.
  if (shape && job.state != JobState::Pending)
    if (auto r = read_in_job_record(log_base(*shape, job.id), job.restarts)) {
      if (std::string in_job = describe_in_job(*r); !in_job.empty())
        row.info = in_job + (row.info.empty() ? "" : "; " + row.info);
      j["in_job"] = in_job_record_json(*r);
    }
  // What the attempt runs with, from its first node (job_environment.hpp).
  if (shape && job.state != JobState::Pending)
    if (auto e = read_environment(log_base(*shape, job.id), job.restarts)) j["environment"] = environment_json(*e);
  long long elapsed = 0;
  if (job.start_time && *job.start_time <= now) {
    bool ended = is_terminal(job.state) && job.end_time && *job.end_time >= *job.start_time;
    elapsed = (ended ? *job.end_time : now) - *job.start_time;
  }
  bool unknown = job.state == JobState::Unknown;
  row.time = unknown ? "-"
                     : format_duration(elapsed) + "/" + (job.time_limit_s ? format_duration(*job.time_limit_s) : "-");
  row.nodes = job.nodes.empty() ? (job.node_count ? std::to_string(job.node_count) : "-") : job.nodes;
  row.gpus = unknown ? "-" : std::to_string(job.gpus);
  auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  // STALLED is the table's word; the JSON keeps Slurm's state beside "stall".
  j.update({{"state", row.state == "STALLED" ? state_name(job.state) : row.state}, {"flags", job.flags}, {"reason", job.reason}, {"reason_text", why},
            {"submit_time", opt(job.submit_time)}, {"start_time", opt(job.start_time)},
            {"end_time", opt(job.end_time)}, {"elapsed_s", elapsed}, {"time_limit_s", opt(job.time_limit_s)},
            {"nodes", job.nodes}, {"node_count", job.node_count}, {"gpus", job.gpus},
            {"exit", {{"code", opt(job.exit.code)}, {"signal", opt(job.exit.signal)}}},
            {"exit_text", describe_exit(job.exit)}, {"restarts", job.restarts}, {"source", job.source}});
  row.json = j;
  return row;
}

// Race, then sweep: where the raced first cell's race stands.
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

// A grid's sweep in one row: its arrays, its cells counted by state.
StatusRow grid_row(const Run& run, const std::vector<CellState>& cells) {
  StatusRow row;
  row.run = run.id;
  row.job = join(array_ids(run), ",");
  row.shape = fmt::format("grid ({} cells)", cells.size());
  JobState state = grid_state(cells);
  row.state = state_name(state);
  row.tone = tone_of(state);
  row.info = grid_summary(cells, run.grid ? run.grid->max_parallel : std::nullopt);
  row.json = {{"run", run.id}, {"job_id", row.job}, {"shape", row.shape}, {"state", row.state}, {"cells", row.info}};
  if (std::string race = grid_race_words(run, cells); !race.empty()) {
    row.info += "; " + race;
    row.json["race"] = race;
  }
  return row;
}

// One row for a race group: racing, won by shape X after N s, or failed.
StatusRow race_row(const Run& run, const RaceState& race, const JobStates& states) {
  StatusRow row;
  row.run = run.id;
  row.job = "-";
  row.shape = "race";
  nlohmann::json j = {{"run", run.id}, {"race", true}};
  nlohmann::json jobs = nlohmann::json::object();
  for (const auto& [label, id] : race.job_of_label()) jobs[label] = id;
  j["jobs"] = jobs;
  nlohmann::json gens = nlohmann::json::array();
  for (const auto& g : race.generations) {
    nlohmann::json gj = {{"generation", g.number}, {"jobs", g.job_of_label}};
    if (g.winner) gj["winner"] = {{"job_id", g.winner->job_id}, {"shape", g.winner->label}};
    if (!g.why.empty()) gj["why"] = g.why;
    gens.push_back(gj);
  }
  j["generations"] = gens;
  int n = static_cast<int>(race.generations.size());
  j["generation"] = n;
  // From generation 2 on: which one this is, and why it was opened.
  std::string generation = n > 1 ? fmt::format("generation {} (re-raced: {}): ", n, race.generations.back().why) : "";
  switch (race_outcome(race, states)) {
    case RaceOutcome::Won: {
      double since = n > 1 && race.generations.back().opened_at > 0 ? race.generations.back().opened_at
                                                                    : static_cast<double>(parse_utc_iso(run.created_at));
      double after = race.winner()->at - since;
      row.state = "WON";
      row.tone = Tone::Good;
      row.info = fmt::format("{}won by shape {} (job {}) {:.0f} s after {}", generation, race.winner()->label,
                             race.winner()->job_id, after, n > 1 ? "the re-race" : "submission");
      j["winner"] = {{"job_id", race.winner()->job_id}, {"shape", race.winner()->label}, {"after_s", after}};
      break;
    }
    case RaceOutcome::Failed:
      row.state = "FAILED";
      row.tone = Tone::Bad;
      row.info = generation + "every shape ended before claiming the group";
      break;
    case RaceOutcome::Racing: {
      row.state = "RACING";
      row.tone = Tone::Waiting;
      std::vector<std::string> labels;
      for (const auto& [label, id] : race.job_of_label()) labels.push_back(label);
      row.info = fmt::format("{}racing: shapes {}", generation, join(labels, ", "));
      break;
    }
  }
  j["state"] = row.state;
  j["reason_text"] = row.info;
  row.json = j;
  return row;
}

// A shape that --rank-by-estimate left out of the race, with the reason.
StatusRow dropped_row(const Run& run, const RankedShape& r) {
  StatusRow row;
  row.run = run.id;
  row.job = "-";
  row.shape = r.label;
  row.state = "DROPPED";
  row.tone = Tone::Muted;
  row.info = "not submitted: " + r.why_dropped;
  row.json = {{"run", run.id}, {"shape", r.label}, {"state", row.state}, {"reason_text", row.info}};
  return row;
}

// A job row of a race group says whether it won or lost, and in which
// generation once the group has re-raced.
void mark_race_job(StatusRow& row, const RaceState& race) {
  const std::string& id = row.job;
  size_t n = race.generations.size();
  std::string note;
  if (race.winner() && race.winner()->job_id == id) {
    note = n > 1 ? fmt::format("race winner of generation {}", n) : "race winner";
  } else {
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
      note = fmt::format("won generation {}, then requeued{}", won->number, loss.empty() ? "" : "; " + loss);
    else
      note = loss;
  }
  if (note.empty()) return;
  row.info = row.info.empty() ? note : note + "; " + row.info;
  row.json["race"] = note;
}

}  // namespace

namespace {

// Runs whose ledger has attempts without a job (intent, unconfirmed, absent).
bool has_jobless_attempts(const Run& run) {
  return std::any_of(run.attempts.begin(), run.attempts.end(), [](const Attempt& a) {
    return a.outcome != Outcome::Submitted && a.outcome != Outcome::Rejected;
  });
}

}  // namespace

StatusReport collect_status(const StatusRequest& req, SlurmClient& slurm, long long now) {
  return collect_status(req, slurm, now, true);
}

namespace {

// The rows of one run: its jobs' (a race's group row first), then the
// attempts that made no job, those shown only with --all or when named
// marked so.
struct RunRows {
  std::string created_at, id;
  std::vector<StatusRow> rows;
  std::vector<std::pair<StatusRow, bool>> attempts;  // (row, shown only with --all or named)
};

// A row as the index keeps it: its cells, and its JSON as text, read only
// for --json.
nlohmann::json row_view(const StatusRow& r) {
  nlohmann::json j = r.json;
  // Its jobs' ends are in the ledger from now on.
  if (auto src = j.find("source"); src != j.end()) *src = "ledger";
  return {{"run", r.run},   {"job", r.job},   {"shape", r.shape}, {"state", r.state}, {"tone", static_cast<int>(r.tone)},
          {"info", r.info}, {"time", r.time}, {"nodes", r.nodes}, {"gpus", r.gpus},   {"json", j.dump()}};
}

StatusRow row_from_view(const nlohmann::json& v, bool with_json) {
  StatusRow r;
  r.run = v.at("run").get<std::string>();
  r.job = v.at("job").get<std::string>();
  r.shape = v.at("shape").get<std::string>();
  r.state = v.at("state").get<std::string>();
  int tone = v.at("tone").get<int>();
  if (tone < static_cast<int>(Tone::Plain) || tone > static_cast<int>(Tone::Bad)) throw std::out_of_range("tone");
  r.tone = static_cast<Tone>(tone);
  r.info = v.at("info").get<std::string>();
  r.time = v.at("time").get<std::string>();
  r.nodes = v.at("nodes").get<std::string>();
  r.gpus = v.at("gpus").get<std::string>();
  const std::string& text = v.at("json").get_ref<const std::string&>();
  if (with_json) r.json = nlohmann::json::parse(text);
  return r;
}

// What the index keeps of an ended run (runs.hpp's view): its rows, as text
// (parsed only when shown).
std::string run_view(const RunRows& g) {
  nlohmann::json rows = nlohmann::json::array(), attempts = nlohmann::json::array();
  for (const auto& r : g.rows) rows.push_back(row_view(r));
  for (const auto& [r, all_only] : g.attempts) attempts.push_back({{"row", row_view(r)}, {"all_only", all_only}});
  return nlohmann::json({{"rows", rows}, {"attempts", attempts}}).dump();
}

// Throws on a view this version cannot read.
RunRows rows_from_view(const IndexedRun& ix, bool with_json) {
  nlohmann::json v = nlohmann::json::parse(ix.view);
  RunRows g{ix.created_at, ix.id, {}, {}};
  for (const auto& r : v.at("rows")) g.rows.push_back(row_from_view(r, with_json));
  for (const auto& a : v.at("attempts"))
    g.attempts.emplace_back(row_from_view(a.at("row"), with_json), a.at("all_only").get<bool>());
  return g;
}

}  // namespace

StatusReport collect_status(const StatusRequest& req, SlurmClient& slurm, long long now, bool adopt) {
  StatusReport report;
  std::vector<Run> runs;
  std::vector<JobRef> refs;
  const bool recent_only = req.targets.empty() && !req.all;
  const long long since = recent_only ? now - kRecentRunsS : std::numeric_limits<long long>::min();
  std::vector<Run> to_index;    // older runs read because the index lacked them
  std::vector<RunRows> viewed;  // ended runs the index answered for: not read
  if (!req.targets.empty()) {
    refs = resolve_targets(req.targets, req.runs_root, runs);
  } else {
    RecentRuns recent = recent_runs(req.runs_root, since, {}, true);
    runs = std::move(recent.runs);
    report.older_runs = recent.older;
    to_index = std::move(recent.to_index);
    for (const auto& ix : recent.indexed) {
      try {
        viewed.push_back(rows_from_view(ix, req.json));
      } catch (const std::exception&) {
        // A view this version cannot read: the run itself is read.
        try {
          runs.push_back(load_run((std::filesystem::path(req.runs_root) / ix.id).string()));
        } catch (const UserError&) {
        }
      }
    }
    for (const auto& run : runs)
      for (const auto& a : run.attempts)
        if (!a.job_id.empty()) refs.push_back({a.job_id, &run, &a});
  }

  // Jobs whose end a ledger holds cost no Slurm call; the others take one
  // squeue (in chunks) and one sacct, and the ends read for the first time
  // are recorded.
  // A grid's arrays are asked apart (status_grid.hpp): one squeue for all
  // of them, and one sacct for the cells squeue no longer shows.
  std::vector<std::string> ids, arrays;
  for (const auto& r : refs) {
    if (!r.attempt || r.attempt->array.empty())
      ids.push_back(r.job_id);
    else if (!r.attempt->end)  // an array whose every cell's end is recorded costs nothing
      arrays.push_back(r.job_id);
  }
  JobStates states = lookup_run_jobs(slurm, runs, ids, now);
  std::vector<Job> array_records;
  bool arrays_answered = false;
  if (!arrays.empty()) {
    JobQuery q = slurm.jobs(arrays);
    arrays_answered = q.answered;
    if (!q.answered && report.slurm_error.empty()) report.slurm_error = q.error;
    array_records = q.jobs;
    bool all_seen = q.answered;
    for (const auto& run : runs)
      if (run.grid)
        for (const auto& c : cell_states(run, array_records))
          if (c.attempt && c.job.state == JobState::Unknown) all_seen = false;
    if (!all_seen) {
      // With every attempt: a requeued cell's earlier ones explain it, and
      // are kept with its end.
      TaskAttempts acc = task_attempts(slurm.attempts(arrays).jobs);
      array_records.insert(array_records.end(), acc.latest.begin(), acc.latest.end());
      for (auto& [id, earlier] : acc.earlier) states.earlier[id] = std::move(earlier);
    }
  }
  report.notes = states.notes;
  // Recording re-read the ledgers: point at the attempts as they are now.
  for (auto& r : refs)
    if (r.run) r.attempt = job_attempt(*r.run, r.job_id);

  // A job that carries the token of an attempt recorded without one (its
  // sbatch's answer was lost, or it was judged absent and appeared later) is
  // adopted into the ledger, and shown as the run's job.
  if (adopt && std::any_of(runs.begin(), runs.end(), has_jobless_attempts)) {
    // Rare (an sbatch whose answer was lost): only then the user's whole queue.
    JobQuery q = slurm.queue();
    const std::vector<Job>& queue = q.jobs;
    bool answered = q.answered;
    int adopted = 0;
    if (answered)
      for (auto& run : runs)
        if (has_jobless_attempts(run)) adopted += adopt_found_jobs(run, queue);
    if (adopted > 0) return collect_status(req, slurm, now, false);
  }

  // Without arguments, a run that has just been seen to end for good before
  // the window is one of the older runs from now on.
  std::set<std::string> hidden;  // run directories
  if (recent_only)
    for (const auto& run : runs)
      if (auto at = run_ended_at(run); at && *at < since) {
        hidden.insert(run.dir);
        ++report.older_runs;
      }

  // Every run's rows, in the order of `runs`; jobs of no run each on their own.
  std::vector<RunRows> groups;
  std::map<const Run*, size_t> group_of;
  for (const auto& run : runs)
    if (!hidden.count(run.dir)) {
      group_of[&run] = groups.size();
      groups.push_back({run.created_at, run.id, {}, {}});
    }
  Extra extra(slurm, states);
  std::map<std::string, RaceState> races;  // by run directory
  std::vector<const Run*> grid_runs;
  for (const auto& ref : refs) {
    if (ref.run && hidden.count(ref.run->dir)) continue;
    if (ref.attempt && !ref.attempt->array.empty()) {
      if (std::find(grid_runs.begin(), grid_runs.end(), ref.run) == grid_runs.end()) grid_runs.push_back(ref.run);
      continue;
    }
    const Job& job = states.jobs.at(ref.job_id);
    if (!is_terminal(job.state)) report.all_done = false;
    StatusRow row = job_row(ref, job, now, extra);
    if (!ref.run) {
      groups.push_back({"", "", {std::move(row)}, {}});
      continue;
    }
    RunRows& g = groups[group_of.at(ref.run)];
    auto it = races.find(ref.run->dir);
    if (it == races.end()) it = races.emplace(ref.run->dir, read_race(*ref.run)).first;
    if (it->second.is_race) {
      if (g.rows.empty()) {
        g.rows.push_back(race_row(*ref.run, it->second, states));
        for (const auto& r : it->second.ranking)
          if (r.dropped) g.rows.push_back(dropped_row(*ref.run, r));
      }
      mark_race_job(row, it->second);
    }
    g.rows.push_back(std::move(row));
  }
  // A grid's sweep: a row per cell when it is named, else one line.
  for (const Run* run : grid_runs) {
    std::vector<CellState> cells = cell_states(*run, array_records);
    RunRows& g = groups[group_of.at(run)];
    for (const auto& c : cells)
      if (c.attempt && !is_terminal(c.job.state)) report.all_done = false;
    if (req.targets.empty()) {
      g.rows.push_back(grid_row(*run, cells));
      continue;
    }
    for (const auto& c : cells) {
      if (!c.attempt) {
        if (!c.waits_for_race) continue;
        StatusRow row;
        row.run = run->id;
        row.job = "-";
        row.shape = c.cell->name;
        row.state = "WAITING";
        row.info = fmt::format("goes on the shape that wins cell {}'s race", cells.front().cell->name);
        row.json = {{"run", run->id}, {"job_id", nullptr}, {"cell", c.cell->name}, {"state", row.state},
                    {"info", row.info}};
        report.all_done = false;
        g.rows.push_back(std::move(row));
        continue;
      }
      // A cell whose end is kept is explained from the ledger alone.
      if (const JobEnd* end = c.attempt->task_end(c.cell->index)) states.ends.emplace(c.job.id, *end);
      StatusRow row = job_row({c.job.id, run, c.attempt}, c.job, now, extra);
      if (c.cell->index == 0 && run->grid->raced) {
        std::string race = grid_race_words(*run, cells);
        row.info = row.info.empty() || row.info == "-" ? race : race + "; " + row.info;
        row.json["race"] = race;
      }
      row.job = c.shown_id;
      row.shape = c.cell->name;
      row.json["job_id"] = c.shown_id;
      row.json["task_job_id"] = c.job.id;
      row.json["cell"] = c.cell->name;
      row.json["array_shape"] = c.attempt->shape;
      // The cell's last metric, from its files (cell_files.hpp): no Slurm call.
      if (auto m = cell_metric_view(*run, c)) {
        row.info = row.info.empty() ? m->text : row.info + "; " + m->text;
        row.json["metric"] = m->json;
      }
      g.rows.push_back(std::move(row));
    }
  }
  // The cells' ends read for the first time are kept: a sweep that ended
  // costs no Slurm call from then on.
  for (auto& run : runs)
    if (run.grid && !hidden.count(run.dir)) {
      try {
        record_cell_ends(run, cell_states(run, array_records), arrays_answered, now, states.earlier, array_records);
        record_race_losers(run, array_records, arrays_answered, now);
      } catch (const std::exception& e) {
        report.notes.push_back(fmt::format("the ends of sweep {}'s cells could not be recorded ({}); they are asked "
                                           "again next time",
                                           run.id, e.what()));
      }
    }
  // Attempts that made no job: unsettled ones always, rejected and absent
  // ones with --all or when their run is named.
  for (const auto& run : runs)
    if (!hidden.count(run.dir))
      for (const auto& a : run.attempts)
        if (a.job_id.empty())
          groups[group_of.at(&run)].attempts.emplace_back(
              attempt_row({"", &run, &a}), a.outcome != Outcome::Intent && a.outcome != Outcome::Unconfirmed);

  if (req.targets.empty()) {
    // The index learns when the runs read ended, and keeps the rows of those
    // that ended for good: nothing about them changes any more.
    std::map<std::string, std::string> views;
    for (const auto& run : runs)
      if (!hidden.count(run.dir) && run_ended_at(run)) views[run.id] = run_view(groups[group_of.at(&run)]);
    std::vector<const Run*> read;
    for (const auto& run : runs) read.push_back(&run);
    for (const auto& run : to_index) read.push_back(&run);
    index_ended_runs(req.runs_root, read, views);
    // Runs from the index take their place among the others: oldest first.
    for (auto& g : viewed) groups.push_back(std::move(g));
    std::stable_sort(groups.begin(), groups.end(), [](const RunRows& a, const RunRows& b) {
      return std::tie(a.created_at, a.id) < std::tie(b.created_at, b.id);
    });
  }
  for (auto& g : groups)
    for (auto& r : g.rows) report.rows.push_back(std::move(r));
  for (auto& g : groups)
    for (auto& [r, all_only] : g.attempts)
      if (!all_only || req.all || !req.targets.empty()) report.rows.push_back(std::move(r));
  report.slurm_error = states.error;
  return report;
}

std::string older_runs_line(size_t older_runs) {
  if (older_runs == 0) return "";
  std::string n = std::to_string(older_runs);
  for (size_t at = n.size(); at > 3; at -= 3) n.insert(at - 3, ",");
  return fmt::format("{} older run{} (ended over {} h ago): --all", n, older_runs == 1 ? "" : "s", kRecentRunsS / 3600);
}

std::vector<std::string> status_table(const std::vector<StatusRow>& rows,
                                      const std::function<std::string(const std::string&, Tone)>& paint) {
  std::vector<std::string> head = {"RUN", "JOB", "SHAPE", "STATE", "TIME/LIMIT", "NODES", "GPUS", "INFO"};
  auto cells = [](const StatusRow& r) {
    return std::vector<std::string>{r.run, r.job, r.shape, r.state, r.time.empty() ? "-" : r.time,
                                    r.nodes.empty() ? "-" : r.nodes, r.gpus.empty() ? "-" : r.gpus, r.info};
  };
  std::vector<size_t> w(head.size());
  for (size_t i = 0; i < head.size(); ++i) w[i] = head[i].size();
  for (const auto& r : rows) {
    auto c = cells(r);
    for (size_t i = 0; i < c.size(); ++i) w[i] = std::max(w[i], c[i].size());
  }
  auto line = [&](const std::vector<std::string>& c, Tone tone) {
    std::string out;
    for (size_t i = 0; i < c.size(); ++i) {
      std::string cell = fmt::format("{:<{}}", c[i], i + 1 == c.size() ? 0 : w[i]);
      out += i == 3 ? paint(cell, tone) : cell;
      if (i + 1 < c.size()) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
  };
  std::vector<std::string> out = {line(head, Tone::Plain)};
  for (const auto& r : rows) out.push_back(line(cells(r), r.tone));
  return out;
}

}  // namespace ddpctl
