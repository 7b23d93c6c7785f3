// ddpctl status [RUN|JOBID...]: ddpctl's runs and their jobs, with in-job
// progress (src/status.hpp assembles the rows).
#include <ctime>
#include <fmt/format.h>
#include <iostream>
#include <memory>

#include "app.hpp"
#include "common.hpp"
#include "status.hpp"

namespace ddpctl::cli {

namespace {

struct StatusOptions {
  StatusRequest req;
  std::string runs;
  bool json = false, watch = false;
};

// Prints the rows once; returns true when every job shown has ended.
bool show(const StatusOptions& o, Context& ctx) {
  StatusReport report = collect_status(o.req, ctx.slurm, ctx.clock.now());
  if (!report.slurm_error.empty())
    std::cerr << "ddpctl: warning: Slurm could not be asked (" << report.slurm_error
              << "); states it could not give are shown as UNKNOWN\n";
  if (o.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : report.rows) out.push_back(r.json);
    std::cout << out.dump(2) << '\n';
  } else if (report.rows.empty()) {
    std::cout << fmt::format("no runs under {}{}\n", o.req.runs_root,
                             o.req.all ? "" : " from the last day (--all shows every run)");
  } else {
    for (const auto& line : status_table(report.rows, paint)) std::cout << line << '\n';
  }
  return report.all_done;
}

void run_status(StatusOptions& o, Context& ctx) {
  o.req.runs_root = runs_root(o.runs);
  if (!o.watch) {
    show(o, ctx);
    return;
  }
  for (;;) {
    if (use_color()) std::cout << "\033[H\033[2J";
    std::cout << fmt::format("ddpctl status, every {}s (Ctrl-C to stop)\n", ctx.poll_s);
    bool done = show(o, ctx);
    std::cout.flush();
    if (done) return;
    ctx.clock.sleep(ctx.poll_s);
  }
}

}  // namespace

void setup_status(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<StatusOptions>();
  CLI::App* cmd = app.add_subcommand("status", "Show runs and their jobs: state, reason, time, progress");
  cmd->add_option("targets", o->req.targets, "Runs (name, id or path) or job ids; default: recent runs");
  cmd->add_option("--runs", o->runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  cmd->add_flag("--all", o->req.all, "Every run, however old");
  cmd->add_flag("--json", o->json, "Print JSON for scripts");
  cmd->add_flag("--watch", o->watch, "Refresh until every job shown has ended");
  cmd->callback([o, &ctx] { run_status(*o, ctx); });
}

}  // namespace ddpctl::cli
