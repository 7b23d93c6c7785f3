// ddpctl status [RUN|JOBID...]: ddpctl's runs and their jobs, with in-job progress.
#include <cctype>
#include <chrono>
#include <ctime>
#include <fmt/format.h>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <unistd.h>

#include "app.hpp"
#include "common.hpp"
#include "jobs.hpp"
#include "race.hpp"
#include "text.hpp"

namespace ddpctl::cli {

namespace {

struct StatusOptions {
  std::vector<std::string> targets;
  std::string runs;
  bool all = false, json = false, watch = false;
};

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

struct Row {
  std::string run, job, shape, state, info, time, nodes, gpus;
  nlohmann::json json;
};

Row make_row(const JobRef& ref, const Job* job) {
  Row row;
  row.run = ref.run ? ref.run->id : "-";
  row.job = ref.job_id.empty() ? "-" : ref.job_id;
  row.shape = ref.attempt ? ref.attempt->shape : "-";
  nlohmann::json j = {{"run", ref.run ? ref.run->id : ""}, {"job_id", ref.job_id}, {"shape", row.shape == "-" ? "" : row.shape}};
  if (!job) {  // an attempt that made no job
    row.state = ref.attempt->outcome == "intent" ? "UNCONFIRMED" : upper(ref.attempt->outcome);
    row.info = printable(ref.attempt->reason, 70);
    j["state"] = row.state;
    j["reason"] = ref.attempt->reason;
    row.json = j;
    return row;
  }
  long long now = std::time(nullptr);
  row.state = job->state;
  std::string why = explain_reason(job->reason);
  if (job->state == "PENDING") {
    row.info = why;
    if (job->start_time > now)
      row.info += (row.info.empty() ? "" : "; ") + std::string("starts in ~") + format_duration(job->start_time - now);
  } else if (job->state == "RUNNING" && ref.run && ref.attempt) {
    if (const RunShape* s = ref.run->shape(ref.attempt->shape))
      if (auto p = read_progress(progress_path(s->output_dir, s->job_name, job->id))) {
        row.info = format_progress(*p);
        j["progress"] = {{"epoch", p->epoch}, {"epochs", p->epochs}, {"step", p->step}, {"steps", p->steps},
                         {"samples_per_s", p->samples_per_s}, {"eta_s", p->eta_s}};
      }
  } else {
    // A job cancelled while pending keeps its last pending reason ("Resources"): not news.
    if (job->state != "CANCELLED") row.info = why;
    if (job->state != "CANCELLED" && !job->exit_code.empty() && job->exit_code != "0" && job->exit_code != "0:0")
      row.info += (row.info.empty() ? "" : "; ") + std::string("exit ") + job->exit_code;
  }
  long long elapsed = 0;
  if (job->start_time > 0 && job->start_time <= now)
    elapsed = (is_terminal_state(job->state) && job->end_time >= job->start_time ? job->end_time : now) - job->start_time;
  row.time = job->state == "UNKNOWN" ? "-"
                                     : format_duration(elapsed) + "/" +
                                           (job->time_limit_s > 0 ? format_duration(job->time_limit_s) : "-");
  row.nodes = job->nodes.empty() ? (job->node_count ? std::to_string(job->node_count) : "-") : job->nodes;
  row.gpus = job->state == "UNKNOWN" ? "-" : std::to_string(job->gpus);
  j.update({{"state", job->state}, {"reason", job->reason}, {"reason_text", why}, {"submit_time", job->submit_time},
            {"start_time", job->start_time}, {"end_time", job->end_time}, {"elapsed_s", elapsed},
            {"time_limit_s", job->time_limit_s}, {"nodes", job->nodes}, {"node_count", job->node_count},
            {"gpus", job->gpus}, {"exit_code", job->exit_code}, {"source", job->source}});
  row.json = j;
  return row;
}

// One row for a race group: racing, won by shape X after N s, or failed.
Row race_row(const Run& run, const RaceState& race, const JobStates& states) {
  Row row;
  row.run = run.id;
  row.job = "-";
  row.shape = "race";
  nlohmann::json j = {{"run", run.id}, {"race", true}};
  nlohmann::json jobs = nlohmann::json::object();
  for (const auto& [label, id] : race.job_of_label) jobs[label] = id;
  j["jobs"] = jobs;
  if (race.winner) {
    double after = race.winner->at - static_cast<double>(parse_utc_iso(run.created_at));
    row.state = "WON";
    row.info = fmt::format("won by shape {} (job {}) {:.0f} s after submission", race.winner->label,
                           race.winner->job_id, after);
    j["winner"] = {{"job_id", race.winner->job_id}, {"shape", race.winner->label}, {"after_s", after}};
  } else {
    bool all_ended = !race.job_of_label.empty();
    for (const auto& [label, id] : race.job_of_label) {
      auto it = states.jobs.find(id);
      all_ended = all_ended && it != states.jobs.end() && is_terminal_state(it->second.state);
    }
    row.state = all_ended && !race.claimed ? "FAILED" : "RACING";
    std::vector<std::string> labels;
    for (const auto& [label, id] : race.job_of_label) labels.push_back(label);
    row.info = row.state == "FAILED" ? "every shape ended before claiming the group"
                                     : fmt::format("racing: shapes {}", fmt::join(labels, ", "));
  }
  j["state"] = row.state;
  j["reason_text"] = row.info;
  row.json = j;
  return row;
}

// A shape that --rank-by-estimate left out of the race, with the reason.
Row dropped_row(const Run& run, const RankedShape& r) {
  Row row;
  row.run = run.id;
  row.job = "-";
  row.shape = r.label;
  row.state = "DROPPED";
  row.info = "not submitted: " + r.why_dropped;
  row.json = {{"run", run.id}, {"shape", r.label}, {"state", row.state}, {"reason_text", row.info}};
  return row;
}

// A job row of a race group says whether it won or lost.
void mark_race_job(Row& row, const RaceState& race) {
  std::string id = row.job;
  std::string note;
  if (race.winner && race.winner->job_id == id) {
    note = "race winner";
  } else {
    for (const auto& e : race.stood_down)
      if (e.job_id == id) note = "lost the race: started, found the group claimed, stood down without training";
    for (const auto& e : race.cancelled)
      if (e.job_id == id && note.empty()) note = "lost the race: cancelled by the winner";
    if (note.empty() && race.winner) note = "lost the race";
  }
  if (note.empty()) return;
  row.info = row.info.empty() ? note : note + "; " + row.info;
  row.json["race"] = note;
}

void print_table(const std::vector<Row>& rows) {
  std::vector<std::string> head = {"RUN", "JOB", "SHAPE", "STATE", "TIME/LIMIT", "NODES", "GPUS", "INFO"};
  std::vector<size_t> w(head.size());
  auto cells = [](const Row& r) {
    return std::vector<std::string>{r.run, r.job, r.shape, r.state, r.time.empty() ? "-" : r.time,
                                    r.nodes.empty() ? "-" : r.nodes, r.gpus.empty() ? "-" : r.gpus, r.info};
  };
  for (size_t i = 0; i < head.size(); ++i) w[i] = head[i].size();
  for (const auto& r : rows) {
    auto c = cells(r);
    for (size_t i = 0; i < c.size(); ++i) w[i] = std::max(w[i], c[i].size());
  }
  auto line = [&](const std::vector<std::string>& c, const std::string& state) {
    std::string out;
    for (size_t i = 0; i < c.size(); ++i) {
      std::string cell = fmt::format("{:<{}}", c[i], i + 1 == c.size() ? 0 : w[i]);
      out += (i == 3 && !state.empty() ? paint(cell, state_color(state)) : cell);
      if (i + 1 < c.size()) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    std::cout << out << '\n';
  };
  line(head, "");
  for (const auto& r : rows) line(cells(r), r.state);
}

// Returns true when every job shown has ended.
bool show(const StatusOptions& o) {
  std::string root = runs_root(o.runs);
  std::vector<Run> runs;
  std::vector<JobRef> refs;
  std::vector<JobRef> no_job;  // attempts that made no job (rejected, unconfirmed)
  if (!o.targets.empty()) {
    refs = resolve_targets(o.targets, root, runs);
  } else {
    runs = list_runs(root);
    for (const auto& run : runs)
      for (const auto& a : run.attempts)
        if (!a.job_id.empty()) refs.push_back({a.job_id, &run, &a});
  }
  for (const auto& run : runs)
    for (const auto& a : run.attempts)
      if (a.job_id.empty() && (a.outcome == "intent" || a.outcome == "unconfirmed" || o.all || !o.targets.empty()))
        no_job.push_back({"", &run, &a});

  SystemCommandRunner runner;
  SlurmClient slurm(runner);
  std::vector<std::string> ids;
  for (const auto& r : refs) ids.push_back(r.job_id);
  JobStates states = lookup_jobs(slurm, ids);

  std::vector<Row> rows;
  std::map<std::string, RaceState> races;  // by run directory
  std::set<std::string> race_shown;
  bool all_done = true;
  long long day_ago = static_cast<long long>(std::time(nullptr)) - 86400;
  for (const auto& ref : refs) {
    const Job& job = states.jobs.at(ref.job_id);
    bool done = is_terminal_state(job.state);
    if (!done) all_done = false;
    // Without arguments: live jobs, and jobs of runs from the last day.
    if (o.targets.empty() && !o.all && done && ref.run && parse_utc_iso(ref.run->created_at) < day_ago) continue;
    Row row = make_row(ref, &job);
    if (ref.run) {
      auto it = races.find(ref.run->dir);
      if (it == races.end()) it = races.emplace(ref.run->dir, read_race(*ref.run)).first;
      if (it->second.is_race) {
        if (!race_shown.count(ref.run->dir)) {
          rows.push_back(race_row(*ref.run, it->second, states));
          for (const auto& r : it->second.ranking)
            if (r.dropped) rows.push_back(dropped_row(*ref.run, r));
          race_shown.insert(ref.run->dir);
        }
        mark_race_job(row, it->second);
      }
    }
    rows.push_back(std::move(row));
  }
  for (const auto& ref : no_job) rows.push_back(make_row(ref, nullptr));

  if (!states.error.empty())
    std::cerr << "ddpctl: warning: Slurm could not be asked (" << states.error
              << "); states it could not give are shown as UNKNOWN\n";
  if (o.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : rows) out.push_back(r.json);
    std::cout << out.dump(2) << '\n';
  } else if (rows.empty()) {
    std::cout << fmt::format("no runs under {}{}\n", root, o.all ? "" : " from the last day (--all shows every run)");
  } else {
    print_table(rows);
  }
  return all_done;
}

void run_status(const StatusOptions& o) {
  if (!o.watch) {
    show(o);
    return;
  }
  for (;;) {
    if (use_color()) std::cout << "\033[H\033[2J";
    std::cout << fmt::format("ddpctl status, every {}s (Ctrl-C to stop)\n", poll_interval_s());
    bool done = show(o);
    std::cout.flush();
    if (done) return;
    std::this_thread::sleep_for(std::chrono::duration<double>(poll_interval_s()));
  }
}

}  // namespace

void setup_status(CLI::App& app) {
  auto opts = std::make_shared<StatusOptions>();
  CLI::App* cmd = app.add_subcommand("status", "Show runs and their jobs: state, reason, time, progress");
  cmd->add_option("targets", opts->targets, "Runs (name, id or path) or job ids; default: recent runs");
  cmd->add_option("--runs", opts->runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  cmd->add_flag("--all", opts->all, "Every run, however old");
  cmd->add_flag("--json", opts->json, "Print JSON for scripts");
  cmd->add_flag("--watch", opts->watch, "Refresh until every job shown has ended");
  cmd->callback([opts] { run_status(*opts); });
}

}  // namespace ddpctl::cli
