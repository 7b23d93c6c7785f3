// ddpctl status [RUN|JOBID...]: ddpctl's runs and their jobs, with in-job
// progress (src/status.hpp assembles the rows).
#include <algorithm>
#include <ctime>
#include <fmt/format.h>
#include <iostream>
#include <map>
#include <unistd.h>
#include <memory>

#include "app.hpp"
#include "common.hpp"
#include "job_environment.hpp"
#include "snapshot.hpp"
#include "status.hpp"

namespace ddpctl::cli {

namespace {

// The longest wait between two polls of --watch while nothing changes.
constexpr double kWatchMaxPollS = 30;

struct StatusOptions {
  StatusRequest req;
  std::string runs;
  bool json = false, watch = false;
  RemoteOptions remote;
};

// What identifies a row from one poll to the next, and what counts as a
// change (not the running clock).
std::string row_key(const StatusRow& r) { return r.run + "\x1f" + r.job + "\x1f" + r.shape; }
std::string row_news(const StatusRow& r) { return r.state + "\x1f" + r.info + "\x1f" + r.nodes + "\x1f" + r.gpus; }

struct Frame {
  std::vector<std::string> lines;  // the table, header first
  std::vector<std::string> keys, news;  // per row (lines[i + 1])
  bool all_done = true;
};

// One poll: the rows as a table (or JSON), warnings on stderr.
Frame poll(const StatusOptions& o, Context& ctx) {
  // One squeue for the refresh: the status's answer also tells whether a
  // race winner was requeued; only a re-race, which changes the records,
  // asks again.
  StatusReport report;
  bool reraced = false;
  {
    SlurmClient::Snapshot one_answer(ctx.slurm);
    report = collect_status(o.req, ctx.slurm, ctx.clock.now());
    reraced = race_again_if_requeued(o.req.runs_root, o.req.targets, ctx);
    reraced = continue_raced_grids(o.req.runs_root, o.req.targets, ctx) || reraced;
  }
  if (reraced) report = collect_status(o.req, ctx.slurm, ctx.clock.now());
  for (const auto& n : report.notes) std::cerr << "ddpctl: note: " << n << '\n';
  if (!report.slurm_error.empty())
    std::cerr << "ddpctl: warning: Slurm could not be asked (" << report.slurm_error
              << "); states it could not give are shown as UNKNOWN\n";
  Frame f;
  f.all_done = report.all_done;
  if (o.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : report.rows) out.push_back(r.json);
    f.lines = {out.dump(2)};
  } else if (report.rows.empty()) {
    f.lines = {report.older_runs ? fmt::format("no active or recent runs under {}; {}", o.req.runs_root,
                                               older_runs_line(report.older_runs))
                                 : fmt::format("no runs under {}", o.req.runs_root)};
  } else {
    f.lines = status_table(report.rows, paint);
    if (report.older_runs) f.lines.push_back(older_runs_line(report.older_runs));
    for (const auto& r : report.rows) f.keys.push_back(row_key(r)), f.news.push_back(row_news(r));
    // Named runs: what code each runs, below the table.
    if (!o.req.targets.empty()) {
      std::vector<std::string> seen;
      for (const auto& r : report.rows) {
        if (r.run == "-" || std::find(seen.begin(), seen.end(), r.run) != seen.end()) continue;
        seen.push_back(r.run);
        f.lines.push_back(fmt::format("{} code: {}", r.run, snapshot_summary(o.req.runs_root + "/" + r.run)));
        if (auto v = r.json.find("ddpctl"); v != r.json.end() && v->is_string())
          f.lines.push_back(fmt::format("{} submitted by ddpctl {}", r.run, v->get<std::string>()));
      }
      // ... and what each job's latest attempt ran with.
      for (const auto& r : report.rows)
        if (auto it = r.json.find("environment"); it != r.json.end())
          if (auto e = parse_environment(it->dump())) f.lines.push_back(fmt::format("job {} ran: {}", r.job, environment_line(*e)));
    }
  }
  return f;
}

void run_status(StatusOptions& o, Context& ctx) {
  o.req.runs_root = runs_root(o.runs);
  o.req.json = o.json;
  if (!o.watch) {
    for (const auto& line : poll(o, ctx).lines) std::cout << line << '\n';
    return;
  }
  // On a terminal the table is redrawn in place (like watch); into a file or
  // a pipe, the first table is printed whole and then only the rows that
  // changed (state, reason, progress, nodes), each as it changed.
  const bool terminal = isatty(STDOUT_FILENO);
  // One Slurm call per poll whatever the number of runs; polls slow down
  // while nothing changes (clock.hpp's PollBackoff).
  PollBackoff backoff(ctx.poll_s, kWatchMaxPollS);
  const std::string title = fmt::format("ddpctl status, every {}-{}s (Ctrl-C to stop)", backoff.base(), backoff.max());
  std::map<std::string, std::string> shown;  // row key -> its last news
  bool first = true;
  for (;;) {
    Frame f = poll(o, ctx);
    bool changed = first || f.keys.size() != shown.size();
    for (size_t i = 0; i < f.keys.size(); ++i)
      if (auto it = shown.find(f.keys[i]); it == shown.end() || it->second != f.news[i]) changed = true;
    if (terminal) {
      std::cout << (first ? "\033[H\033[2J" : "\033[H") << title << "\033[K\n";
      for (const auto& line : f.lines) std::cout << line << "\033[K\n";
      std::cout << "\033[J";
    } else if (first || f.keys.empty()) {
      if (first) std::cout << title << '\n';
      if (first || o.json) for (const auto& line : f.lines) std::cout << line << '\n';
    } else {
      for (size_t i = 0; i < f.keys.size(); ++i)
        if (auto it = shown.find(f.keys[i]); it == shown.end() || it->second != f.news[i]) std::cout << f.lines[i + 1] << '\n';
    }
    shown.clear();
    for (size_t i = 0; i < f.keys.size(); ++i) shown[f.keys[i]] = f.news[i];
    first = false;
    std::cout.flush();
    if (f.all_done) return;
    ctx.clock.sleep(backoff.after_poll(changed));
  }
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
    run_on_remote_if_asked(o->remote, ctx);
    run_status(*o, ctx);
  });
}

}  // namespace ddpctl::cli
