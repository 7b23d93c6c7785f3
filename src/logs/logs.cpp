#include "logs/logs.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>

#include "explain/cell_files.hpp"
#include "runs/job_files.hpp"
#include "explain/experiments.hpp"
#include "explain/failure.hpp"
#include "runs/job_states.hpp"
#include "explain/race.hpp"
#include "race/race_again.hpp"
#include "race/race_waiting.hpp"
#include "runs/task_logs.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

namespace {

// What was appended to `path` since `offset`; advances `offset`.
std::string read_from(const std::string& path, std::uintmax_t& offset) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  auto size = static_cast<std::uintmax_t>(in.tellg());
  if (size < offset) offset = 0;  // truncated or replaced
  in.seekg(static_cast<std::streamoff>(offset));
  std::string chunk(size - offset, '\0');
  in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
  offset = size;
  return chunk;
}

struct Followed {
  std::string path, title;
  std::uintmax_t offset = 0;
};

// One job's log files, shown once or followed: its batch log and errors,
// and the step log of its latest attempt (a requeue adds the next one).
class LogFiles {
 public:
  explicit LogFiles(const JobLogs& l) : l_(l), attempt_(latest_logged_attempt(l)) {
    files_ = {{job_files::batch_out(l.base), "batch log"}, {job_files::batch_err(l.base), "batch errors"}};
    if (attempt_ >= 0) files_.push_back(step_file(attempt_));
  }
  bool any() const {
    for (const auto& f : files_)
      if (fs::exists(f.path)) return true;
    return false;
  }
  // What was appended to each since the last call.
  void show(Output& out) {
    for (auto& f : files_) {
      std::error_code ec;
      if (!fs::exists(f.path, ec)) continue;
      std::uintmax_t size = fs::file_size(f.path, ec);
      if (ec) continue;
      if (size == 0 && first_ && f.title.rfind("training", 0) == 0) {
        out.line(fmt::format("==> {} ({}) <==\n(empty)", f.path, f.title));
        continue;
      }
      if (size == f.offset) continue;
      out.line(fmt::format("==> {} ({}) <==", f.path, f.title));
      out.raw(read_from(f.path, f.offset));
    }
    first_ = false;
  }
  // A requeued job starts a new attempt: its step log is followed from there.
  void follow_requeue(Output& out) {
    int now = latest_logged_attempt(l_);
    if (now <= attempt_) return;
    attempt_ = now;
    out.line(fmt::format("==> job {} was requeued: attempt {} <==", l_.job_id, attempt_ + 1));
    files_.push_back(step_file(attempt_));
  }

 private:
  Followed step_file(int k) const {
    return Followed{job_files::step_log(l_.base, k, l_.task),
                    fmt::format("training output, attempt {}, task {}", k + 1, l_.task)};
  }
  JobLogs l_;
  int attempt_;
  std::vector<Followed> files_;
  bool first_ = true;
};

// A race's logs are the winner's; following a race not yet won waits for it.
std::string race_winner(const LogsRequest& o, const Run& run, Context& ctx, Output& out) {
  RaceState race = read_race(run);
  if (!race.is_race || !o.shape.empty()) return "";
  bool told = false;
  while (!race.winner()) {
    if (!o.follow)
      throw UserError(Location{run.dir}, "",
                      fmt::format("race run {} has no winner yet; `ddpctl logs -f` waits for one, --shape picks a "
                                  "shape's job",
                                  run.id));
    if (!told) out.line(fmt::format("==> race {}: waiting for a shape to win <==", run.id));
    told = true;
    ctx.clock.sleep(ctx.poll_s / 2);
    race = read_race(run);
  }
  // Followed from a re-race on (started after one, or going on with the
  // next generation's winner): said once per winner, whatever the timing.
  if (o.follow && race.generations.size() > 1)
    out.line(fmt::format("==> race {}: generation {} won by shape {} (job {}); following it <==", run.id,
                         race.generations.size(), race.winner()->label, race.winner()->job_id));
  return race.winner()->job_id;
}

}  // namespace

JobLogs locate_logs(const LogsRequest& o, const Run& run, const std::string& winner) {
  const Attempt* attempt = nullptr;
  for (auto it = run.attempts.rbegin(); it != run.attempts.rend() && !attempt; ++it)
    if (!it->job_id.empty() && (o.shape.empty() || it->shape == o.shape) && (winner.empty() || it->job_id == winner))
      attempt = &*it;
  if (!attempt)
    throw UserError(Location{run.dir}, "", fmt::format("run {} has no submitted job{}", run.id,
                                                       o.shape.empty() ? "" : " of shape " + o.shape));
  const RunShape* shape = run.shape(attempt->shape);
  if (!shape) throw UserError(Location{run.dir + "/run.json"}, "", "no shape " + attempt->shape + " in the run record");
  int world = shape->nodes * shape->ranks_per_node;
  int rank = std::max(o.rank, 0);
  if (rank >= world)
    throw UserError(Location{"--rank"}, "", fmt::format("rank {} is outside this job's {} ranks (0-{})", rank,
                                                        world, world - 1));
  JobLogs l;
  l.job_id = attempt->job_id;
  l.base = log_base(*shape, attempt->job_id);
  l.task = shape->per_gpu ? rank : rank / std::max(shape->ranks_per_node, 1);
  return l;
}

int latest_logged_attempt(const JobLogs& l) {
  int latest = -1;
  for (int k = 0; k < 1000; ++k) {
    if (!fs::exists(job_files::step_log(l.base, k, l.task))) {
      if (k > latest + 1) break;  // allow no gaps beyond one
      continue;
    }
    latest = k;
  }
  return latest;
}

namespace {

// A failed job's logs open at the rank that failed first, unless --rank says.
JobLogs open_failing_rank(LogsRequest o, const Run& run, JobLogs l, Context& ctx, Output& out) {
  if (o.rank >= 0) return l;
  const Attempt* attempt = nullptr;
  for (const auto& a : run.attempts)
    if (a.job_id == l.job_id) attempt = &a;
  const RunShape* shape = attempt ? run.shape(attempt->shape) : nullptr;
  if (!shape) return l;
  // An ended job's end is in the ledger once read: no Slurm call then.
  std::vector<Run> runs = {run};
  JobStates states = lookup_run_jobs(ctx.slurm, runs, {l.job_id}, ctx.clock.now());
  const Job& job = states.jobs.at(l.job_id);
  auto f = explain_failure(*shape, job, states, ctx.slurm);
  if (!f) return l;
  if (f->rank && *f->rank < shape->nodes * shape->ranks_per_node) {
    o.rank = *f->rank;
    out.line(fmt::format("==> job {} ended {}: {}; showing rank {}'s output (--rank picks another) <==", l.job_id,
                         state_name(job.state), describe_failure(*f), *f->rank));
    return locate_logs(o, run, l.job_id);
  }
  out.line(fmt::format("==> job {} ended {}: {} <==", l.job_id, state_name(job.state), describe_failure(*f)));
  return l;
}

}  // namespace

const RunCell& pick_cell(const LogsRequest& o, const Run& run) {
  const std::vector<RunCell>& cells = run.grid->cells;
  if (o.cell.empty()) {
    if (cells.size() == 1) return cells.front();
    std::vector<std::string> names;
    for (size_t i = 0; i < cells.size() && i < 20; ++i) names.push_back(cells[i].name);
    std::string more = cells.size() > names.size()
                           ? fmt::format(" and {} more (`ddpctl status {}` lists them)", cells.size() - names.size(), run.id)
                           : "";
    throw UserError(Location{"--cell"}, "",
                    fmt::format("run {} is a grid's sweep of {} cells, each with logs of its own: --cell NAME picks "
                                "one; its cells are {}{}",
                                run.id, cells.size(), join(names, "; "), more));
  }
  std::vector<std::string> names;
  for (const auto& c : cells) {
    if (c.name == o.cell) return c;
    names.push_back(c.name);
  }
  throw UserError(Location{"--cell"}, "", fmt::format("sweep {} has no cell {}{}", run.id, printable(o.cell, 200),
                                                      did_you_mean(o.cell, names)));
}

JobLogs locate_cell_logs(const LogsRequest& o, const Run& run, const CellState& c) {
  if (!c.attempt)
    throw UserError(Location{run.dir}, "",
                    fmt::format("cell {} of sweep {} was never submitted (`ddpctl sweep retry {} --cells '{}'`)",
                                c.cell->name, run.id, run.id, c.cell->name));
  std::string own = cell_task_job_id(c);
  if (own.empty())
    throw UserError(Location{run.dir}, "",
                    fmt::format("cell {} ({}) is {}: it has written no log yet (`ddpctl logs {} --cell '{}' -f` waits "
                                "for it to start)",
                                c.cell->name, c.shown_id, state_name(c.job.state), run.id, c.cell->name));
  const RunShape* shape = run.shape(c.attempt->shape);
  if (!shape) throw UserError(Location{run.dir + "/run.json"}, "", "no shape " + c.attempt->shape + " in the run record");
  int world = shape->nodes * shape->ranks_per_node;
  int rank = std::max(o.rank, 0);
  if (rank >= world)
    throw UserError(Location{"--rank"}, "", fmt::format("rank {} is outside this cell's {} ranks (0-{})", rank,
                                                        world, world - 1));
  JobLogs l;
  l.job_id = own;
  l.base = log_base(*shape, own);
  l.task = shape->per_gpu ? rank : rank / std::max(shape->ranks_per_node, 1);
  return l;
}

namespace {

// The cell's state now: its end from the ledger, else one squeue of the
// sweep's arrays, and sacct when squeue no longer shows it (as status).
CellState read_cell(const Run& run, const RunCell& cell, SlurmClient& slurm) {
  auto find = [&](const std::vector<Job>& records) {
    for (auto& c : cell_states(run, records))
      if (c.cell == &cell) return c;
    throw std::logic_error("logs: cell " + cell.name + " is not among its sweep's cells");
  };
  CellState c = find({});
  if (!c.attempt || c.job.source == "ledger") return c;
  std::vector<std::string> arrays = array_ids(run);
  JobQuery q = slurm.jobs(arrays);
  std::vector<Job> records = q.jobs;
  c = find(records);
  if (c.job.state != JobState::Unknown) return c;
  JobQuery acc = slurm.accounting(arrays);
  records.insert(records.end(), acc.jobs.begin(), acc.jobs.end());
  return find(records);
}

void show_cell_logs(const LogsRequest& o, const Run& run, Context& ctx, Output& out) {
  const RunCell& cell = pick_cell(o, run);
  CellState c = read_cell(run, cell, ctx.slurm);
  // A pending cell has no log yet: -f waits for its task to start.
  bool told = false;
  while (o.follow && c.attempt && cell_task_job_id(c).empty()) {
    if (is_terminal(c.job.state)) {
      out.line(fmt::format("==> cell {} ({}) ended {} before it started <==", cell.name, c.shown_id,
                           state_name(c.job.state)));
      return;
    }
    if (!told)
      out.line(fmt::format("==> cell {} ({}) is {}: waiting for it to start <==", cell.name, c.shown_id,
                           state_name(c.job.state)));
    told = true;
    ctx.clock.sleep(ctx.poll_s / 2);
    c = read_cell(run, cell, ctx.slurm);
  }
  JobLogs l = locate_cell_logs(o, run, c);
  const RunShape* shape = run.shape(c.attempt->shape);
  // A failed cell's logs open at the rank that failed first, unless --rank says.
  if (!o.follow && o.rank < 0 && shape && is_terminal(c.job.state) && c.job.state != JobState::Completed)
    if (auto f = explain_failure(*shape, c.job, ctx.slurm)) {
      std::string words = fmt::format("==> cell {} ({}) ended {}: {}", cell.name, c.shown_id, state_name(c.job.state),
                                      describe_failure(*f));
      if (f->rank && *f->rank < shape->nodes * shape->ranks_per_node) {
        LogsRequest at = o;
        at.rank = *f->rank;
        l = locate_cell_logs(at, run, c);
        words += fmt::format("; showing rank {}'s output (--rank picks another)", *f->rank);
      }
      out.line(words + " <==");
    }
  LogFiles files(l);
  if (!files.any() && !o.follow)
    throw UserError(Location{job_files::batch_out(l.base)}, "",
                    fmt::format("cell {} ({}, job {}) has written no log yet (`ddpctl status {}`)", cell.name,
                                c.shown_id, l.job_id, run.id));
  files.show(out);
  if (!o.follow) return;
  EndWatcher end(ctx.clock);
  double unknown_since = -1;  // when Slurm stopped showing it (monotonic); < 0: it shows it
  for (;;) {
    files.follow_requeue(out);
    files.show(out);
    if (end.ended(c.job)) {
      out.line(fmt::format("==> cell {} ({}) ended: {} <==", cell.name, c.shown_id, state_name(c.job.state)));
      return;
    }
    // Neither squeue nor sacct shows it (or Slurm cannot be asked): sacct
    // may lag an end by a moment; a minute of it is an answer.
    if (c.job.state != JobState::Unknown) {
      unknown_since = -1;
    } else if (unknown_since < 0) {
      unknown_since = ctx.clock.monotonic();
    } else if (ctx.clock.monotonic() - unknown_since > 60) {
      out.line(fmt::format("==> cell {} ({}): Slurm no longer shows it; how it ended is unknown <==", cell.name,
                           c.shown_id));
      return;
    }
    ctx.clock.sleep(ctx.poll_s / 2);
    c = read_cell(run, cell, ctx.slurm);
  }
}

}  // namespace

void show_logs(const LogsRequest& o, Context& ctx, Output& out) {
  Run run = find_run(o.runs_root, o.run);
  if (run.grid) return show_cell_logs(o, run, ctx, out);
  if (!o.cell.empty())
    throw UserError(Location{"--cell"}, "", fmt::format("run {} is not a grid's sweep: it has no cells", run.id));
  // A job id names that job, whichever shape or generation it ran as.
  const Attempt* named = job_attempt(run, o.run);
  std::string winner = named ? named->job_id : race_winner(o, run, ctx, out);
  // A winner of a generation opened since the run was read (a re-race
  // submitted its job after): its attempt is in the ledger now.
  if (!winner.empty() && !job_attempt(run, winner)) run = load_run(run.dir);
  JobLogs l = locate_logs(o, run, winner);
  if (!o.follow) l = open_failing_rank(o, run, l, ctx, out);

  LogFiles files(l);
  if (!files.any() && !o.follow)
    throw UserError(Location{job_files::batch_out(l.base)}, "",
                    fmt::format("job {} has written no log yet (is it still pending? `ddpctl status {}`)", l.job_id,
                                run.id));
  files.show(out);
  if (!o.follow) return;

  // Following a race's winner: when it is requeued and the group races again
  // (the job itself, or `race-again`), the new generation's winner is
  // followed instead. Reading never submits: where nobody has re-raced, it
  // says once which command does.
  const bool raced = o.shape.empty() && read_race(run).is_race;
  const size_t generation = raced ? read_race(run).generations.size() : 0;
  bool noted = false;
  EndWatcher end(ctx.clock);
  for (;;) {
    JobStates states = lookup_jobs(ctx.slurm, {l.job_id});
    const Job& job = states.jobs.at(l.job_id);
    if (raced && !noted && requeued(job)) {
      std::vector<Run> group = {load_run(run.dir)};
      if (!requeued_winners(group, ctx.slurm).empty()) {
        out.line(fmt::format("==> job {} was requeued and waits; `ddpctl race-again {}` races the other shapes "
                             "again (logs only reads) <==",
                             l.job_id, run.id));
        noted = true;
      }
    }
    if (raced) {
      RaceState race = read_race(run);
      if (race.generations.size() > generation && race.winner() && race.winner()->job_id != l.job_id)
        return show_logs(o, ctx, out);  // race_winner says which generation it follows now
    }
    files.follow_requeue(out);
    files.show(out);
    if (end.ended(job)) {
      out.line(fmt::format("==> job {} ended: {} <==", l.job_id, state_name(job.state)));
      return;
    }
    if (job.state == JobState::Unknown && states.queue_answered) {
      out.line(fmt::format("==> job {} left the queue; how it ended is unknown ({}) <==", l.job_id, job.reason));
      return;
    }
    ctx.clock.sleep(ctx.poll_s / 2);
  }
}

}  // namespace ddpctl
