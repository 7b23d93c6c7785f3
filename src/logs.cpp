#include "logs.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>

#include "job_files.hpp"
#include "experiments.hpp"
#include "failure.hpp"
#include "jobs.hpp"
#include "race.hpp"
#include "race_group.hpp"

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

int latest_restart(const JobLogs& l) {
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

void show_logs(const LogsRequest& o, Context& ctx, Output& out) {
  Run run = find_run(o.runs_root, o.run);
  // A job id names that job, whichever shape or generation it ran as.
  const Attempt* named = job_attempt(run, o.run);
  JobLogs l = named ? locate_logs(o, run, named->job_id) : locate_logs(o, run, race_winner(o, run, ctx, out));
  if (!o.follow) l = open_failing_rank(o, run, l, ctx, out);

  std::vector<Followed> files = {{job_files::batch_out(l.base), "batch log"}, {job_files::batch_err(l.base), "batch errors"}};
  int restart = latest_restart(l);
  auto step_file = [&](int k) {
    return Followed{job_files::step_log(l.base, k, l.task),
                    fmt::format("training output, attempt {}, task {}", k + 1, l.task)};
  };
  if (restart >= 0) files.push_back(step_file(restart));

  bool first = true;
  auto show_all = [&]() {
    for (auto& f : files) {
      std::error_code ec;
      if (!fs::exists(f.path, ec)) continue;
      std::uintmax_t size = fs::file_size(f.path, ec);
      if (ec) continue;
      if (size == 0 && first && f.title.rfind("training", 0) == 0) {
        out.line(fmt::format("==> {} ({}) <==\n(empty)", f.path, f.title));
        continue;
      }
      if (size == f.offset) continue;
      out.line(fmt::format("==> {} ({}) <==", f.path, f.title));
      out.raw(read_from(f.path, f.offset));
    }
  };
  bool any = false;
  for (const auto& f : files) any = any || fs::exists(f.path);
  if (!any && !o.follow)
    throw UserError(Location{job_files::batch_out(l.base)}, "",
                    fmt::format("job {} has written no log yet (is it still pending? `ddpctl status {}`)", l.job_id,
                                run.id));
  show_all();
  first = false;
  if (!o.follow) return;

  // Following a race's winner: when it is requeued, the group races again
  // (as status would) and the new generation's winner is followed instead.
  const bool raced = o.shape.empty() && read_race(run).is_race;
  const size_t generation = raced ? read_race(run).generations.size() : 0;
  EndWatcher end(ctx.clock);
  for (;;) {
    JobStates states = lookup_jobs(ctx.slurm, {l.job_id});
    const Job& job = states.jobs.at(l.job_id);
    if (raced && (job.state == JobState::Pending || job.state == JobState::RequeueHold)) {
      std::vector<Run> group = {load_run(run.dir)};
      race_again_where_requeued(group, ctx, out);
    }
    if (raced) {
      RaceState race = read_race(run);
      if (race.generations.size() > generation && race.winner() && race.winner()->job_id != l.job_id) {
        out.line(fmt::format("==> race {}: generation {} won by shape {} (job {}); following it <==", run.id,
                             race.generations.size(), race.winner()->label, race.winner()->job_id));
        return show_logs(o, ctx, out);
      }
    }
    // A requeued job starts a new attempt: follow its step log from there.
    int now = latest_restart(l);
    if (now > restart) {
      restart = now;
      out.line(fmt::format("==> job {} was requeued: attempt {} <==", l.job_id, restart + 1));
      files.push_back(step_file(restart));
    }
    show_all();
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
