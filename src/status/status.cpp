#include "status/status.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "explain/experiments.hpp"
#include "explain/race.hpp"
#include "runs/runs_index.hpp"
#include "explain/status_grid.hpp"
#include "runs/job_states.hpp"
#include "runs/run_store.hpp"
#include "explain/status_extras.hpp"
#include "status/status_events.hpp"
#include "status/status_rows.hpp"
#include "status/status_view.hpp"
#include "submit/submit.hpp"

namespace ddpctl {

namespace {

// Runs whose ledger has attempts without a job (intent, unconfirmed, absent).
bool has_jobless_attempts(const Run& run) {
  return std::any_of(run.attempts.begin(), run.attempts.end(), [](const Attempt& a) {
    return a.outcome != Outcome::Submitted && a.outcome != Outcome::Rejected;
  });
}

// One status: the runs asked for, what Slurm says of their jobs, their rows.
// `refs` point into `runs`: a Refresh is neither copied nor moved.
class Refresh {
 public:
  Refresh(const StatusRequest& req, SlurmClient& slurm, long long now)
      : req_(req), slurm_(slurm), now_(now), recent_only_(req.targets.empty() && !req.all),
        since_(recent_only_ ? now - kRecentRunsS : std::numeric_limits<long long>::min()) {}
  Refresh(const Refresh&) = delete;
  Refresh& operator=(const Refresh&) = delete;

  // False when a job was adopted into a ledger: the refresh starts again.
  bool gather(bool adopt) {
    gather_runs();
    ask_slurm();
    return !(adopt && adopt_found_jobs_of_runs());
  }
  StatusReport rows() {
    hide_older_runs();
    open_groups();
    StatusExtras extras(slurm_, states_);
    extras.named = !req_.targets.empty();
    add_job_rows(extras);
    add_grid_rows(extras);
    record_grid_ends();
    add_attempt_rows();
    // After its jobs' ends (a grid's cells are said where they are shown).
    for (const auto& run : runs_)
      if (shown(run) && (!run.grid || !req_.targets.empty())) say_run_ended(run, states_, grids_over_.count(&run) > 0);
    if (req_.targets.empty()) index_and_sort();
    return finish();
  }

 private:
  void gather_runs();
  void ask_slurm();
  void ask_arrays(const std::vector<std::string>& arrays);
  bool adopt_found_jobs_of_runs();
  void hide_older_runs();
  void open_groups();
  void add_job_rows(StatusExtras& extras);
  void add_grid_rows(StatusExtras& extras);
  void add_cell_rows(const Run& run, const std::vector<CellState>& cells, StatusExtras& extras);
  void record_grid_ends();
  void add_attempt_rows();
  void index_and_sort();
  StatusReport finish();
  bool shown(const Run& run) const { return !hidden_.count(run.dir); }
  RunRows& group(const Run& run) { return groups_[group_of_.at(&run)]; }

  const StatusRequest& req_;
  SlurmClient& slurm_;
  const long long now_;
  const bool recent_only_;
  const long long since_;
  StatusReport report_;
  std::vector<Run> runs_;
  std::vector<JobRef> refs_;
  std::vector<Run> to_index_;    // older runs read because the index lacked them
  std::vector<RunRows> viewed_;  // ended runs the index answered for: not read
  JobStates states_;
  std::vector<Job> array_records_;
  bool arrays_answered_ = false;
  std::set<std::string> hidden_;  // run directories
  std::vector<RunRows> groups_;
  std::map<const Run*, size_t> group_of_;
  std::vector<const Run*> grid_runs_;
  std::set<const Run*> grids_over_;  // every cell submitted and ended (status_events.hpp)
};

void Refresh::gather_runs() {
  if (!req_.targets.empty()) {
    refs_ = resolve_targets(req_.targets, req_.runs_root, runs_);
    return;
  }
  RecentRuns recent = recent_runs(req_.runs_root, since_, {}, true);
  runs_ = std::move(recent.runs);
  report_.older_runs = recent.older;
  to_index_ = std::move(recent.to_index);
  for (const auto& ix : recent.indexed) {
    try {
      viewed_.push_back(rows_from_view(ix, req_.json));
    } catch (const std::exception&) {
      // A view this version cannot read: the run itself is read.
      try {
        runs_.push_back(load_run((std::filesystem::path(req_.runs_root) / ix.id).string()));
      } catch (const UserError&) {
      }
    }
  }
  for (const auto& run : runs_)
    for (const auto& a : run.attempts)
      if (!a.job_id.empty()) refs_.push_back({a.job_id, &run, &a});
}

// Jobs whose end a ledger holds cost no Slurm call; the others take one
// squeue (in chunks) and one sacct, and the ends read for the first time
// are recorded.
// A grid's arrays are asked apart (status_grid.hpp): one squeue for all
// of them, and one sacct for the cells squeue no longer shows.
void Refresh::ask_slurm() {
  std::vector<std::string> ids, arrays;
  for (const auto& r : refs_) {
    if (!r.attempt || r.attempt->array.empty())
      ids.push_back(r.job_id);
    else if (!r.attempt->end)  // an array whose every cell's end is recorded costs nothing
      arrays.push_back(r.job_id);
  }
  states_ = lookup_run_jobs(slurm_, runs_, ids, now_);
  if (!arrays.empty()) ask_arrays(arrays);
  report_.notes = states_.notes;
  // Recording re-read the ledgers: point at the attempts as they are now.
  for (auto& r : refs_)
    if (r.run) r.attempt = job_attempt(*r.run, r.job_id);
}

void Refresh::ask_arrays(const std::vector<std::string>& arrays) {
  JobQuery q = slurm_.jobs(arrays);
  arrays_answered_ = q.answered;
  if (!q.answered && report_.slurm_error.empty()) report_.slurm_error = q.error;
  array_records_ = q.jobs;
  bool all_seen = q.answered;
  for (const auto& run : runs_)
    if (run.grid)
      for (const auto& c : cell_states(run, array_records_))
        if (c.attempt && c.job.state == JobState::Unknown) all_seen = false;
  if (all_seen) return;
  // With every attempt: a requeued cell's earlier ones explain it, and
  // are kept with its end.
  TaskAttempts acc = task_attempts(slurm_.attempts(arrays).jobs);
  array_records_.insert(array_records_.end(), acc.latest.begin(), acc.latest.end());
  for (auto& [id, earlier] : acc.earlier) states_.earlier[id] = std::move(earlier);
}

// A job that carries the token of an attempt recorded without one (its
// sbatch's answer was lost, or it was judged absent and appeared later) is
// adopted into the ledger, and shown as the run's job.
bool Refresh::adopt_found_jobs_of_runs() {
  if (!std::any_of(runs_.begin(), runs_.end(), has_jobless_attempts)) return false;
  // Rare (an sbatch whose answer was lost): only then the user's whole queue.
  JobQuery q = slurm_.queue();
  int adopted = 0;
  if (q.answered)
    for (auto& run : runs_)
      if (has_jobless_attempts(run)) adopted += adopt_found_jobs(run, q.jobs);
  return adopted > 0;
}

// Without arguments, a run that has just been seen to end for good before
// the window is one of the older runs from now on.
void Refresh::hide_older_runs() {
  if (!recent_only_) return;
  for (const auto& run : runs_)
    if (auto at = run_ended_at(run); at && *at < since_) {
      hidden_.insert(run.dir);
      ++report_.older_runs;
    }
}

// Every run's rows, in the order of `runs`; jobs of no run each on their own.
void Refresh::open_groups() {
  for (const auto& run : runs_)
    if (shown(run)) {
      group_of_[&run] = groups_.size();
      groups_.push_back({run.created_at, run.id, {}, {}});
    }
}

void Refresh::add_job_rows(StatusExtras& extras) {
  std::map<std::string, RaceState> races;  // by run directory
  for (const auto& ref : refs_) {
    if (ref.run && !shown(*ref.run)) continue;
    if (ref.attempt && !ref.attempt->array.empty()) {
      if (std::find(grid_runs_.begin(), grid_runs_.end(), ref.run) == grid_runs_.end()) grid_runs_.push_back(ref.run);
      continue;
    }
    const Job& job = states_.jobs.at(ref.job_id);
    if (!is_terminal(job.state)) report_.all_done = false;
    const RunShape* shape = ref.run && ref.attempt ? ref.run->shape(ref.attempt->shape) : nullptr;
    if (!ref.run) {
      groups_.push_back({"", "", {job_row({ref, job, now_, shape, extras})}, {}});
      continue;
    }
    auto it = races.find(ref.run->dir);
    if (it == races.end()) it = races.emplace(ref.run->dir, read_race(*ref.run)).first;
    const RaceState& race = it->second;
    RunRows& g = group(*ref.run);
    if (race.is_race && g.rows.empty()) {
      g.rows.push_back(race_row(*ref.run, race, states_));
      for (const auto& r : race.ranking)
        if (r.dropped) g.rows.push_back(dropped_row(*ref.run, r));
    }
    g.rows.push_back(job_row({ref, job, now_, shape, extras, &race}));
    if (ref.attempt && (states_.ends.count(ref.job_id) || is_terminal(job.state)))
      say_job_ended(*ref.run, *ref.attempt, job, g.rows.back());
  }
}

// A grid's sweep: a row per cell when it is named, else one line.
void Refresh::add_grid_rows(StatusExtras& extras) {
  for (const Run* run : grid_runs_) {
    std::vector<CellState> cells = cell_states(*run, array_records_);
    bool over = !cells.empty();
    for (const auto& c : cells) {
      if (c.attempt && !is_terminal(c.job.state)) report_.all_done = false;
      if (!c.attempt || !is_terminal(c.job.state)) over = false;
    }
    if (over) grids_over_.insert(run);
    if (req_.targets.empty())
      group(*run).rows.push_back(grid_row(*run, cells));
    else
      add_cell_rows(*run, cells, extras);
  }
}

void Refresh::add_cell_rows(const Run& run, const std::vector<CellState>& cells, StatusExtras& extras) {
  RunRows& g = group(run);
  for (const auto& c : cells) {
    if (!c.attempt) {
      if (!c.waits_for_race) continue;
      report_.all_done = false;
      g.rows.push_back(waiting_cell_row(run, cells, c));
      continue;
    }
    // A cell whose end is kept is explained from the ledger alone.
    if (const JobEnd* end = c.attempt->task_end(c.cell->index)) states_.ends.emplace(c.job.id, *end);
    JobRef ref{c.job.id, &run, c.attempt};
    JobFacts facts{ref, c.job, now_, run.shape(c.attempt->shape), extras};
    facts.cells = &cells;
    facts.cell = &c;
    g.rows.push_back(cell_row(facts));
    if (c.attempt->task_end(c.cell->index) || is_terminal(c.job.state)) say_job_ended(run, *c.attempt, c.job, g.rows.back(), c.cell->name);
  }
}

// The cells' ends read for the first time are kept: a sweep that ended
// costs no Slurm call from then on.
void Refresh::record_grid_ends() {
  for (auto& run : runs_)
    if (run.grid && shown(run)) {
      try {
        record_cell_ends(run, cell_states(run, array_records_), arrays_answered_, now_, states_.earlier,
                         array_records_);
        record_race_losers(run, array_records_, arrays_answered_, now_);
      } catch (const std::exception& e) {
        report_.notes.push_back(fmt::format("the ends of sweep {}'s cells could not be recorded ({}); they are asked "
                                            "again next time",
                                            run.id, e.what()));
      }
    }
}

// Attempts that made no job: unsettled ones always, rejected and absent
// ones with --all or when their run is named.
void Refresh::add_attempt_rows() {
  for (const auto& run : runs_)
    if (shown(run))
      for (const auto& a : run.attempts)
        if (a.job_id.empty())
          group(run).attempts.emplace_back(attempt_row({"", &run, &a}),
                                           a.outcome != Outcome::Intent && a.outcome != Outcome::Unconfirmed);
}

// The index learns when the runs read ended, and keeps the rows of those
// that ended for good: nothing about them changes any more.
void Refresh::index_and_sort() {
  std::map<std::string, std::string> views;
  for (const auto& run : runs_)
    if (shown(run) && run_ended_at(run)) views[run.id] = run_view(group(run));
  std::vector<const Run*> read;
  for (const auto& run : runs_) read.push_back(&run);
  for (const auto& run : to_index_) read.push_back(&run);
  index_ended_runs(req_.runs_root, read, views);
  // Runs from the index take their place among the others: oldest first.
  for (auto& g : viewed_) groups_.push_back(std::move(g));
  std::stable_sort(groups_.begin(), groups_.end(), [](const RunRows& a, const RunRows& b) {
    return std::tie(a.created_at, a.id) < std::tie(b.created_at, b.id);
  });
}

StatusReport Refresh::finish() {
  for (auto& g : groups_)
    for (auto& r : g.rows) report_.rows.push_back(std::move(r));
  for (auto& g : groups_)
    for (auto& [r, all_only] : g.attempts)
      if (!all_only || req_.all || !req_.targets.empty()) report_.rows.push_back(std::move(r));
  report_.slurm_error = states_.error;
  return std::move(report_);
}

}  // namespace

StatusReport collect_status(const StatusRequest& request, SlurmClient& slurm, long long now) {
  return collect_status(request, slurm, now, true);
}

StatusReport collect_status(const StatusRequest& req, SlurmClient& slurm, long long now, bool adopt) {
  Refresh refresh(req, slurm, now);
  if (!refresh.gather(adopt)) return collect_status(req, slurm, now, false);
  return refresh.rows();
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
