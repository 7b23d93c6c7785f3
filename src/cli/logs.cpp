// ddpctl logs RUN [-f] [--rank N]: the job's logs, found from the run record
// (Slurm's %x_%j names and the per-attempt, per-task step logs), followed
// across requeues.
#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include "app.hpp"
#include "common.hpp"
#include "jobs.hpp"
#include "race.hpp"
#include "text.hpp"

namespace ddpctl::cli {

namespace {

namespace fs = std::filesystem;

struct LogsOptions {
  std::string run;
  std::string runs;
  std::string shape;
  int rank = 0;
  bool follow = false;
};

struct JobLogs {
  std::string job_id;
  std::string base;  // <output_dir>/<job name>_<job id>
  int task = 0;
};

// The highest restart number with a step log for `task`, or -1.
int latest_restart(const JobLogs& l) {
  int latest = -1;
  for (int k = 0; k < 1000; ++k) {
    if (!fs::exists(fmt::format("{}.restart{}.{}.out", l.base, k, l.task))) {
      if (k > latest + 1) break;  // allow no gaps beyond one
      continue;
    }
    latest = k;
  }
  return latest;
}

// Prints what was appended to `path` since `offset`; returns the new offset.
std::uintmax_t print_from(const std::string& path, std::uintmax_t offset) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return offset;
  in.seekg(0, std::ios::end);
  auto size = static_cast<std::uintmax_t>(in.tellg());
  if (size < offset) offset = 0;  // truncated or replaced
  in.seekg(static_cast<std::streamoff>(offset));
  std::string chunk(size - offset, '\0');
  in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
  std::cout << chunk;
  std::cout.flush();
  return size;
}

struct Followed {
  std::string path, title;
  std::uintmax_t offset = 0;
};

// A race's logs are the winner's; following a race not yet won waits for it.
std::string race_winner(const LogsOptions& o, const Run& run) {
  RaceState race = read_race(run);
  if (!race.is_race || !o.shape.empty()) return "";
  bool told = false;
  while (!race.winner) {
    if (!o.follow)
      throw UserError(Location{run.dir}, "",
                      fmt::format("race run {} has no winner yet; `ddpctl logs -f` waits for one, --shape picks a "
                                  "shape's job",
                                  run.id));
    if (!told) std::cout << fmt::format("==> race {}: waiting for a shape to win <==\n", run.id);
    told = true;
    std::this_thread::sleep_for(std::chrono::duration<double>(poll_interval_s() / 2));
    race = read_race(run);
  }
  return race.winner->job_id;
}

JobLogs locate(const LogsOptions& o, Run& run) {
  std::string winner = race_winner(o, run);
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
  if (o.rank < 0 || o.rank >= world)
    throw UserError(Location{"--rank"}, "", fmt::format("rank {} is outside this job's {} ranks (0-{})", o.rank,
                                                        world, world - 1));
  JobLogs l;
  l.job_id = attempt->job_id;
  l.base = fmt::format("{}/{}_{}", shape->output_dir, shape->job_name, attempt->job_id);
  l.task = shape->per_gpu ? o.rank : o.rank / std::max(shape->ranks_per_node, 1);
  return l;
}

void run_logs(const LogsOptions& o) {
  std::string root = runs_root(o.runs);
  Run run = find_run(root, o.run);
  JobLogs l = locate(o, run);

  std::vector<Followed> files = {{l.base + ".out", "batch log"}, {l.base + ".err", "batch errors"}};
  int restart = latest_restart(l);
  auto step_file = [&](int k) {
    return Followed{fmt::format("{}.restart{}.{}.out", l.base, k, l.task),
                    fmt::format("training output, attempt {}, task {}", k + 1, l.task)};
  };
  if (restart >= 0) files.push_back(step_file(restart));

  bool first = true;
  auto show_all = [&]() {
    for (auto& f : files) {
      if (!fs::exists(f.path)) continue;
      std::uintmax_t size = fs::file_size(f.path);
      if (size == 0 && first && f.title.rfind("training", 0) == 0) {
        std::cout << fmt::format("==> {} ({}) <==\n(empty)\n", f.path, f.title);
        continue;
      }
      if (size == f.offset) continue;
      std::cout << fmt::format("==> {} ({}) <==\n", f.path, f.title);
      f.offset = print_from(f.path, f.offset);
    }
  };
  bool any = false;
  for (const auto& f : files) any = any || fs::exists(f.path);
  if (!any && !o.follow)
    throw UserError(Location{l.base + ".out"}, "",
                    fmt::format("job {} has written no log yet (is it still pending? `ddpctl status {}`)", l.job_id,
                                run.id));
  show_all();
  first = false;
  if (!o.follow) return;

  SystemCommandRunner runner;
  SlurmClient slurm(runner);
  EndWatcher end;
  for (;;) {
    JobStates states = lookup_jobs(slurm, {l.job_id});
    const Job& job = states.jobs.at(l.job_id);
    // A requeued job starts a new attempt: follow its step log from there.
    int now = latest_restart(l);
    if (now > restart) {
      restart = now;
      std::cout << fmt::format("==> job {} was requeued: attempt {} <==\n", l.job_id, restart + 1);
      files.push_back(step_file(restart));
    }
    show_all();
    if (end.ended(job)) {
      std::cout << fmt::format("==> job {} ended: {} <==\n", l.job_id, job.state);
      return;
    }
    if (job.state == "UNKNOWN" && states.queue_answered) {
      std::cout << fmt::format("==> job {} left the queue; how it ended is unknown ({}) <==\n", l.job_id, job.reason);
      return;
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(poll_interval_s() / 2));
  }
}

}  // namespace

void setup_logs(CLI::App& app) {
  auto opts = std::make_shared<LogsOptions>();
  CLI::App* cmd = app.add_subcommand("logs", "Show (or follow) a run's job logs");
  cmd->add_option("run", opts->run, "Run (name, id or path)")->required();
  cmd->add_option("--rank", opts->rank, "Show the training output of this global rank (default 0)");
  cmd->add_option("--shape", opts->shape, "The job of this shape (default: the latest job; a race's winner)");
  cmd->add_option("--runs", opts->runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  cmd->add_flag("-f,--follow", opts->follow, "Keep printing as the job writes, across requeues, until it ends");
  cmd->callback([opts] { run_logs(*opts); });
}

}  // namespace ddpctl::cli
