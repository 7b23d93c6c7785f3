#include "status/status_rows.hpp"

#include <cctype>
#include <fmt/format.h>

#include "runs/provenance_record.hpp"
#include "base/text.hpp"
#include "runs/job_files.hpp"
#include "script/snapshot.hpp"
#include "runs/snapshot_record.hpp"
#include "slurm/reasons.hpp"

namespace ddpctl {

namespace {


// The code the job runs (snapshot.json), null for runs from before
// snapshots, and the ddpctl that submitted it.
void add_run_json(const Run& run, nlohmann::json& j) {
  std::string code = snapshot_record(run.dir);
  auto parsed = nlohmann::json::parse(code.empty() ? "null" : code, nullptr, false);
  j["code"] = parsed.is_discarded() ? nlohmann::json() : parsed;
  j["ddpctl"] = run.ddpctl_version.empty() ? nlohmann::json() : nlohmann::json(run.ddpctl_version);
}

// TIME/LIMIT, NODES, GPUS, and Slurm's record in the JSON.
void add_times(const Job& job, long long now, const std::string& why, StatusRow& row, nlohmann::json& j) {
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
            {"exit_text", describe_exit(job.exit)}, {"restarts", job.requeues}, {"source", job.source}});
}

}  // namespace

StatusRow job_row(const JobFacts& facts) {
  const JobRef& ref = facts.ref;
  const Job& job = facts.job;
  StatusRow row;
  row.run = ref.run ? ref.run->id : "-";
  row.job = ref.job_id.empty() ? "-" : ref.job_id;
  row.shape = ref.attempt ? ref.attempt->shape : "-";
  nlohmann::json j = {{"run", ref.run ? ref.run->id : ""}, {"job_id", ref.job_id}, {"shape", row.shape == "-" ? "" : row.shape}};
  if (ref.run) add_run_json(*ref.run, j);
  JobWords words = explain_job(facts);
  row.state = words.state.empty() ? state_name(job.state) : words.state;
  row.tone = words.state.empty() ? tone_of(job.state) : words.tone;
  row.info = words.info;
  j.update(words.json);
  // What the attempt runs with, from its first node (provenance.hpp).
  if (facts.shape && job.state != JobState::Pending)
    if (auto e = read_provenance(log_base(*facts.shape, job.id), job.requeues)) j["environment"] = provenance_json(*e);
  add_times(job, facts.now, explain_reason(job.reason), row, j);
  row.json = j;
  return row;
}

StatusRow cell_row(const JobFacts& facts) {
  const CellState& c = *facts.cell;
  StatusRow row = job_row(facts);
  row.job = c.shown_id;
  row.shape = c.cell->name;
  row.json["job_id"] = c.shown_id;
  row.json["task_job_id"] = c.job.id;
  row.json["cell"] = c.cell->name;
  row.json["array_shape"] = c.attempt->shape;
  return row;
}

StatusRow waiting_cell_row(const Run& run, const std::vector<CellState>& cells, const CellState& cell) {
  StatusRow row;
  row.run = run.id;
  row.job = "-";
  row.shape = cell.cell->name;
  row.state = "WAITING";
  row.info = fmt::format("goes on the shape that wins cell {}'s race", cells.front().cell->name);
  row.json = {{"run", run.id}, {"job_id", nullptr}, {"cell", cell.cell->name}, {"state", row.state}, {"info", row.info}};
  return row;
}

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

}  // namespace ddpctl
