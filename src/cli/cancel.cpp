// ddpctl cancel RUN|JOBID...: scancel, then confirm what Slurm did.
#include <chrono>
#include <fmt/format.h>
#include <iostream>
#include <memory>
#include <thread>

#include "app.hpp"
#include "common.hpp"
#include "jobs.hpp"
#include "text.hpp"

namespace ddpctl::cli {

namespace {

struct CancelOptions {
  std::vector<std::string> targets;
  std::string runs;
};

void run_cancel(const CancelOptions& o) {
  std::string root = runs_root(o.runs);
  std::vector<Run> runs;
  std::vector<JobRef> refs = resolve_targets(o.targets, root, runs);
  if (refs.empty()) throw UserError("no jobs to cancel: the runs named have no submitted jobs");

  SystemCommandRunner runner;
  SlurmClient slurm(runner);
  std::vector<std::string> ids;
  for (const auto& r : refs) ids.push_back(r.job_id);
  // scancel of an id Slurm does not know exits 0 silently, so ask first.
  JobStates before = lookup_jobs(slurm, ids);
  if (!before.queue_answered) throw UserError("cannot cancel: Slurm could not be asked (" + before.error + ")");
  std::vector<std::string> live;
  std::vector<std::string> failed;
  for (const auto& id : ids) {
    const Job& job = before.jobs.at(id);
    if (is_terminal_state(job.state))
      std::cout << fmt::format("job {}: already ended ({})\n", id, job.state);
    else if (job.state == "UNKNOWN")
      failed.push_back(fmt::format("job {}: {}; nothing was cancelled", id, job.reason));
    else
      live.push_back(id);
  }
  auto report = [&failed] {
    if (failed.empty()) return;
    std::vector<Diagnostic> diags;
    for (const auto& f : failed) diags.push_back({Location{}, "", f});
    throw UserError(diags);
  };
  if (live.empty()) return report();

  // Record the request before scancel runs.
  for (auto& run : runs) {
    bool touched = false;
    for (auto& a : run.attempts)
      if (std::find(live.begin(), live.end(), a.job_id) != live.end()) {
        a.cancel_requested_at = utc_now_iso();
        touched = true;
      }
    if (touched) save_ledger(run);
  }
  CommandResult r = slurm.cancel(live);
  if (!r.ok()) throw UserError("scancel failed: " + r.describe());

  // Confirm: every job must reach a terminal state (or leave the queue).
  std::vector<std::string> left = live;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!left.empty()) {
    JobStates after = lookup_jobs(slurm, left);
    std::vector<std::string> still;
    for (const auto& id : left) {
      const Job& job = after.jobs.at(id);
      if (is_terminal_state(job.state))
        std::cout << fmt::format("job {}: {}\n", id, paint(job.state, state_color(job.state)));
      else
        still.push_back(id);
    }
    left = still;
    if (left.empty()) break;
    if (std::chrono::steady_clock::now() > deadline) {
      for (const auto& id : left)
        failed.push_back(fmt::format("job {} is still {} 30 s after scancel", id, after.jobs.at(id).state));
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  report();
}

}  // namespace

void setup_cancel(CLI::App& app) {
  auto opts = std::make_shared<CancelOptions>();
  CLI::App* cmd = app.add_subcommand("cancel", "Cancel the jobs of runs (or job ids) and confirm they ended");
  cmd->add_option("targets", opts->targets, "Runs (name, id or path) or job ids")->required();
  cmd->add_option("--runs", opts->runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  cmd->callback([opts] { run_cancel(*opts); });
}

}  // namespace ddpctl::cli
