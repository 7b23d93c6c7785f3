#include "explain/status_grid.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <map>
#include <set>

#include "slurm/job_array.hpp"
#include "runs/ledger.hpp"
#include "explain/race.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace {
// "OUT_OF_MEMORY" -> "out of memory".
std::string words_of(const char* state) {
  std::string s = state;
  for (char& c : s) c = c == '_' ? ' ' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
}  // namespace

std::vector<std::string> array_ids(const Run& run, bool unended_only) {
  std::vector<std::string> ids;
  for (const auto& a : run.attempts)
    if (!a.array.empty() && a.outcome == Outcome::Submitted && !a.job_id.empty() && !(unended_only && a.end))
      ids.push_back(a.job_id);
  return ids;
}

std::vector<CellState> cell_states(const Run& run, const std::vector<Job>& records) {
  std::vector<CellState> out;
  if (!run.grid) return out;
  // Which attempt last named each cell: a retry's array replaces the first.
  std::map<int, const Attempt*> attempt_of;
  // A raced grid's first cell runs in the job of the shape that won its
  // race; until one did, in every shape's.
  std::string winner;  // its label
  std::vector<const Attempt*> racing;
  bool continued = false;  // the other cells were submitted (or tried)
  if (run.grid->raced) {
    RaceState race = read_race(run);
    if (!race.generations.empty() && race.generations.front().winner) winner = race.generations.front().winner->label;
  }
  for (const auto& a : run.attempts) {
    if (!a.race) continued = continued || run.grid->raced;
    if (a.array.empty() || a.outcome != Outcome::Submitted) continue;
    if (a.race) {
      if (winner.empty()) racing.push_back(&a);
      if (winner.empty() ? attempt_of.count(0) > 0 : a.shape != winner) continue;
    }
    for (int i : a.array_cells()) attempt_of[i] = &a;
  }
  // The records by array and index: a task's own record first (squeue's
  // come first, so they win over sacct's), else its collapsed pending one.
  std::map<std::pair<std::string, int>, const Job*> task, pending;
  for (const Job& j : records) {
    const std::string& array = submission_id(j);
    if (j.array_task_id) {
      task.emplace(std::make_pair(array, *j.array_task_id), &j);
    } else if (!j.array_tasks.empty()) {
      if (auto tasks = parse_array_tasks(j.array_tasks))
        for (int i : tasks->indices) pending.emplace(std::make_pair(array, i), &j);
    }
  }
  for (const RunCell& cell : run.grid->cells) {
    CellState s;
    s.cell = &cell;
    if (cell.index == 0 && racing.size() > 1) s.racing = racing;
    auto a = attempt_of.find(cell.index);
    if (a == attempt_of.end()) {
      s.waits_for_race = run.grid->raced && !continued;
      out.push_back(std::move(s));
      continue;
    }
    s.attempt = a->second;
    s.shown_id = fmt::format("{}_{}", a->second->job_id, cell.index - a->second->array_offset);
    auto key = std::make_pair(a->second->job_id, cell.index - a->second->array_offset);
    if (const JobEnd* end = a->second->task_end(cell.index)) {
      s.job = end->job;  // final: Slurm is not asked again
      s.job.source = "ledger";
    } else if (auto t = task.find(key); t != task.end()) {
      s.job = *t->second;
    } else if (auto p = pending.find(key); p != pending.end()) {
      s.job = *p->second;
      s.job.array_task_id = key.second;
    } else {
      s.job.id = s.shown_id;
      s.job.state = JobState::Unknown;
    }
    s.throttled = s.job.state == JobState::Pending && s.job.reason == "JobArrayTaskLimit";
    out.push_back(std::move(s));
  }
  return out;
}

JobState grid_state(const std::vector<CellState>& cells) {
  auto any = [&](auto pred) { return std::any_of(cells.begin(), cells.end(), pred); };
  if (any([](const CellState& c) { return c.job.state == JobState::Running || c.job.state == JobState::Completing ||
                                           c.job.state == JobState::Configuring; }))
    return JobState::Running;
  if (any([](const CellState& c) { return c.job.state == JobState::Pending || c.job.state == JobState::Requeued; }))
    return JobState::Pending;
  if (any([](const CellState& c) { return c.job.state == JobState::Unknown; })) return JobState::Unknown;
  if (cells.empty() ||
      std::all_of(cells.begin(), cells.end(), [](const CellState& c) { return c.job.state == JobState::Completed; }))
    return cells.empty() ? JobState::Unknown : JobState::Completed;
  return JobState::Failed;
}

std::string grid_summary(const std::vector<CellState>& cells, std::optional<int> max_parallel) {
  // In the order a user scans them: done, running, waiting, then what went wrong.
  std::map<std::string, int> count;
  std::vector<std::string> order;
  int throttled = 0;
  auto add = [&](const std::string& word) {
    if (count[word]++ == 0) order.push_back(word);
  };
  for (const auto& c : cells) {
    if (!c.attempt) {
      add(c.waits_for_race ? "waiting for the race" : "not submitted");
      continue;
    }
    switch (c.job.state) {
      case JobState::Completed: add("done"); break;
      case JobState::Running:
      case JobState::Completing:
      case JobState::Configuring: add("running"); break;
      case JobState::Pending:
      case JobState::Requeued:
        add("pending");
        if (c.throttled) ++throttled;
        break;
      case JobState::Unknown: add("unknown"); break;
      default: add(words_of(state_name(c.job.state))); break;
    }
  }
  static const std::vector<std::string> first = {"done", "running", "pending"};
  std::vector<std::string> parts;
  for (const auto& w : first)
    if (count.count(w)) {
      std::string part = fmt::format("{} {}", count[w], w);
      if (w == "pending" && throttled)
        part += max_parallel ? fmt::format(" (throttled %{})", *max_parallel) : " (throttled)";
      parts.push_back(part);
    }
  for (const auto& w : order)
    if (std::find(first.begin(), first.end(), w) == first.end()) parts.push_back(fmt::format("{} {}", count[w], w));
  return fmt::format("{} cell{}: {}", cells.size(), cells.size() == 1 ? "" : "s", join(parts, ", "));
}

int record_race_losers(Run& run, const std::vector<Job>& records, bool squeue_answered, long long now) {
  if (!squeue_answered || !run.grid || !run.grid->raced) return 0;
  RaceState race = read_race(run);
  if (race.generations.empty() || !race.generations.front().winner) return 0;
  const std::string winner = race.generations.front().winner->label;
  std::map<std::string, std::string> how;  // loser job id -> what the race says of it
  for (const auto& e : race.cancelled) how[e.job_id] = "cancelled by the race's winner";
  for (const auto& e : race.stood_down) how[e.job_id] = "lost the race and stood down";
  std::set<std::string> listed;
  for (const Job& j : records)
    if (!is_terminal(j.state)) listed.insert(submission_id(j));  // still queued or running
  int recorded = 0;
  std::vector<std::pair<std::string, std::string>> ends;  // job id, how
  for (const auto& a : run.attempts)
    if (a.race && a.shape != winner && a.outcome == Outcome::Submitted && !a.end && how.count(a.job_id) &&
        !listed.count(a.job_id))
      ends.emplace_back(a.job_id, how[a.job_id]);
  if (ends.empty()) return 0;
  update_ledger(run, [&](std::vector<Attempt>& attempts) {
    for (auto& a : attempts)
      for (const auto& [id, why] : ends)
        if (a.job_id == id && !a.end) {
          Job job;
          job.id = id;
          job.state = JobState::Cancelled;
          job.reason = why;
          job.source = "ledger";
          a.end = JobEnd{job, {}, {}, now};
          ++recorded;
        }
  });
  return recorded;
}

int record_cell_ends(Run& run, const std::vector<CellState>& cells, bool squeue_answered, long long now,
                     const std::map<std::string, std::vector<Job>>& earlier, const std::vector<Job>& records) {
  if (!squeue_answered) return 0;  // a controller that did not answer proves nothing
  std::map<std::string, std::vector<Job>> news;  // by array id
  for (const auto& c : cells)
    if (c.attempt && c.job.source == "sacct" && is_terminal(c.job.state) && c.job.array_task_id &&
        !c.attempt->task_end(c.cell->index))
      news[c.attempt->job_id].push_back(c.job);
  // An array whose every cell a later array took over (a retry, before its
  // own ends were kept) is no cell's: its tasks' ends come from its records.
  std::set<std::string> current, listed;  // arrays of cells; arrays squeue still lists
  for (const auto& c : cells)
    if (c.attempt) current.insert(c.attempt->job_id);
  for (const Job& j : records)
    if (j.source != "sacct") listed.insert(submission_id(j));
  for (const Job& j : records)
    if (j.source == "sacct" && is_terminal(j.state) && j.array_task_id && !current.count(submission_id(j)) &&
        !listed.count(submission_id(j)))
      if (const Attempt* a = job_attempt(run, submission_id(j)); a && !a->array.empty() && !a->end &&
                                                                  !a->task_end(*j.array_task_id + a->array_offset))
        news[a->job_id].push_back(j);
  if (news.empty()) return 0;
  int recorded = 0;
  update_ledger(run, [&](std::vector<Attempt>& attempts) {
    for (size_t n = 0; n < attempts.size(); ++n) {
      Attempt& a = attempts[n];
      if (a.array.empty() || a.outcome != Outcome::Submitted) continue;
      if (auto it = news.find(a.job_id); it != news.end())
        for (const Job& job : it->second)
          if (!a.task_end(*job.array_task_id + a.array_offset)) {
            auto e = earlier.find(job.id);
            a.task_ends.push_back(JobEnd{job, e == earlier.end() ? std::vector<Job>() : e->second, {}, now});
            ++recorded;
          }
      // Every cell of the array ended, or is a later array's (a retry): the
      // array has ended too.
      std::vector<int> named = a.array_cells();
      if (a.end || named.empty() || a.task_ends.empty()) continue;
      std::set<int> later;
      for (size_t m = n + 1; m < attempts.size(); ++m)
        if (!attempts[m].array.empty() && attempts[m].outcome == Outcome::Submitted)
          for (int i : attempts[m].array_cells()) later.insert(i);
      bool all = std::all_of(named.begin(), named.end(), [&](int i) { return a.task_end(i) || later.count(i); });
      if (!all) continue;
      Job summary;
      summary.id = a.job_id;
      summary.name = a.task_ends.front().job.name;
      summary.source = "ledger";
      bool completed = true, cancelled_only = true;
      for (const auto& e : a.task_ends) {
        if (e.job.state != JobState::Completed) completed = false;
        if (e.job.state != JobState::Completed && e.job.state != JobState::Cancelled) cancelled_only = false;
        if (e.job.start_time && (!summary.start_time || *e.job.start_time < *summary.start_time))
          summary.start_time = e.job.start_time;
        if (e.job.end_time && (!summary.end_time || *e.job.end_time > *summary.end_time))
          summary.end_time = e.job.end_time;
      }
      summary.state = completed ? JobState::Completed : cancelled_only ? JobState::Cancelled : JobState::Failed;
      a.end = JobEnd{summary, {}, {}, now};
    }
  });
  return recorded;
}

}  // namespace ddpctl
