// ddpctl status [RUN|JOBID...]: ddpctl's runs and their jobs, with in-job
// progress (src/status/status.hpp assembles the rows, src/status/status_watch.hpp prints
// them and runs --watch).
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <memory>
#include <set>
#include <unistd.h>

#include "cli/app.hpp"
#include "cli/common.hpp"
#include "remote/remote_fetch.hpp"
#include "race/race_waiting.hpp"
#include "sites/site_caller.hpp"
#include "sites/sites_status.hpp"
#include "status/status.hpp"
#include "status/status_watch.hpp"

namespace ddpctl::cli {

namespace {

struct StatusOptions {
  StatusRequest req;
  std::string runs;
  bool json = false, watch = false;
  RemoteOptions remote;
  std::set<std::string> noted;  // the waiting acts said so far (--watch says each once)
};

// One poll: the rows as a table (or JSON), warnings on stderr, and once each
// the acts that wait (a requeued race winner, a raced grid's cells) with the
// command that does them: reading never submits (race_waiting.hpp).
StatusFrame poll(StatusOptions& o, Context& ctx) {
  // One squeue for the refresh.
  StatusReport report;
  std::vector<std::string> waiting;
  {
    SlurmClient::Snapshot one_answer(ctx.slurm);
    report = collect_status(o.req, ctx.slurm, ctx.clock.now());
    waiting = waiting_act_notes(o.req.runs_root, o.req.targets, ctx.clock.now(), ctx.slurm);
  }
  for (const auto& n : report.notes) std::cerr << "ddpctl: note: " << n << '\n';
  for (const auto& n : waiting)
    if (o.noted.insert(n).second) std::cerr << "ddpctl: note: " << n << '\n';
  if (!report.slurm_error.empty())
    std::cerr << "ddpctl: warning: Slurm could not be asked (" << report.slurm_error
              << "); states it could not give are shown as UNKNOWN\n";
  return status_frame(report, o.req, paint);
}

void run_status(StatusOptions& o, Context& ctx) {
  o.req.runs_root = runs_root(o.runs);
  o.req.json = o.json;
  if (!o.watch) {
    for (const auto& line : poll(o, ctx).lines) std::cout << line << '\n';
    return;
  }
  StatusWatch w;
  w.poll = [&] { return poll(o, ctx); };
  w.terminal = isatty(STDOUT_FILENO);
  w.json = o.json;
  w.poll_s = ctx.poll_s;
  watch_status(w, ctx.clock, std::cout);
}

// A race across sites: every site's jobs, one call to each (sites_status.hpp).
// --watch: one call per site each poll, through the same connections.
void site_race_status(const std::string& dir, const StatusOptions& o, Context& ctx) {
  SshSiteCaller sites(race_remote_base(dir, ctx.env), ctx.runner);
  const std::string id = std::filesystem::path(dir).filename().string();
  auto frame = [&] {
    std::vector<SiteRow> rows = site_race_rows(dir, sites);
    StatusFrame f = site_race_frame(id, rows);
    if (!o.json) return f;
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : rows)
      j.push_back({{"run", id}, {"site", r.site}, {"job_id", r.job}, {"shape", r.shape}, {"state", r.state},
                   {"info", r.info}, {"site_run", r.site_run}, {"ended", r.ended}});
    f.lines = {j.dump(2)};
    f.keys.clear(), f.news.clear();  // JSON is printed whole at each poll
    return f;
  };
  if (!o.watch) {
    for (const auto& line : frame().lines) std::cout << line << '\n';
    return;
  }
  StatusWatch w;
  w.poll = frame;
  w.terminal = isatty(STDOUT_FILENO);
  w.json = o.json;
  w.poll_s = std::max(ctx.poll_s, 5.0);
  watch_status(w, ctx.clock, std::cout);
}

}  // namespace

void setup_status(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<StatusOptions>();
  CLI::App* cmd = app.add_subcommand("status", "Show runs and their jobs: state, reason, time, progress");
  cmd->add_option("targets", o->req.targets, "Runs (name, id or path) or job ids; default: recent runs");
  cmd->add_option("--runs", o->runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  cmd->add_flag("--all", o->req.all, "Every run, also those that ended over 24 h ago");
  cmd->add_flag("--json", o->json, "Print JSON for scripts");
  cmd->add_flag("--watch", o->watch, "Refresh until every job shown has ended");
  add_remote_options(cmd, o->remote);
  cmd->callback([o, &ctx] {
    // The copies here of that folder's runs (`fetch`) follow its status.
    run_on_remote_if_asked(o->remote, ctx, refresh_copies_after(runs_root("")));
    if (o->req.targets.size() == 1)
      if (auto dir = find_site_race(runs_root(o->runs), o->req.targets.front()))
        return site_race_status(*dir, *o, ctx);
    run_status(*o, ctx);
  });
}

}  // namespace ddpctl::cli
