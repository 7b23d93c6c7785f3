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
#include "base/json_document.hpp"
#include "cli/common.hpp"
#include "cli/json_into.hpp"
#include "cli/json_output.hpp"
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
  int json = -1;  // --json's major (-1: none; 0: the bare rows of before the envelope)
  bool watch = false;
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

// The rows of a frame printed as JSON (status_frame), for the document:
// each with the keys every document uses ("job" beside the older "job_id").
nlohmann::json rows_of(const StatusFrame& f) {
  nlohmann::json rows = f.lines.empty() ? nlohmann::json::array() : nlohmann::json::parse(f.lines.front());
  for (auto& r : rows)
    if (r.is_object() && r.contains("job_id") && !r.contains("job")) r["job"] = r["job_id"];
  return rows;
}

// The runs a frame shows (its keys begin with the run; its JSON has "run").
std::vector<std::string> status_run_ids(const StatusFrame& f, const StatusOptions& o) {
  std::vector<std::string> ids;
  if (o.json >= 0) {
    for (const auto& r : rows_of(f))
      if (r.is_object() && r.contains("run") && r["run"].is_string()) ids.push_back(r["run"]);
  } else {
    for (const auto& k : f.keys) ids.push_back(k.substr(0, k.find('\x1f')));
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

// --json=1: the frame as the status document (ddpctl.status/1); its rows are
// the document's, never printed as text.
StatusFrame as_document(StatusFrame f, const StatusOptions& o) {
  if (JsonInto* into = json_into())  // --json-into: the runs shown, from now
    for (const auto& line : status_run_ids(f, o))
      if (std::filesystem::is_directory(o.req.runs_root + "/" + line)) into->follow(o.req.runs_root + "/" + line, false);
  if (o.json < 1 || !json_capture()) return f;
  nlohmann::json rows = rows_of(f);
  if (!o.watch) {
    json_fact("rows", rows);
    f.lines.clear();
    return f;
  }
  nlohmann::json doc = json_capture()->envelope();
  doc["rows"] = rows;
  json_capture()->emit(doc);
  f.lines.clear();
  return f;
}

void run_status(StatusOptions& o, Context& ctx) {
  o.req.runs_root = runs_root(o.runs);
  o.req.json = o.json >= 0;
  if (!o.watch) {
    for (const auto& line : as_document(poll(o, ctx), o).lines) std::cout << line << '\n';
    return;
  }
  StatusWatch w;
  w.poll = [&] { return as_document(poll(o, ctx), o); };
  w.terminal = isatty(STDOUT_FILENO) && o.json < 0;
  w.json = o.json >= 0;
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
    if (o.json < 0) return f;
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : rows)
      j.push_back({{"run", id}, {"site", r.site}, {"job_id", r.job}, {"shape", r.shape}, {"state", r.state},
                   {"info", r.info}, {"site_run", r.site_run}, {"ended", r.ended}});
    f.lines = {j.dump(2)};
    f.keys.clear(), f.news.clear();  // JSON is printed whole at each poll
    return as_document(f, o);
  };
  if (!o.watch) {
    for (const auto& line : frame().lines) std::cout << line << '\n';
    return;
  }
  StatusWatch w;
  w.poll = frame;
  w.terminal = isatty(STDOUT_FILENO) && o.json < 0;
  w.json = o.json >= 0;
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
  cmd->add_flag("--json{1}", o->json,
                "Print the status document for programs (docs/json.md); --json=0: the bare rows of before")
      ->check(CLI::Range(0, kJsonMajor));
  cmd->add_flag("--watch", o->watch, "Refresh until every job shown has ended");
  add_remote_options(cmd, o->remote);
  cmd->callback([o, &ctx] {
    // CLI11 reads `--json=0` as a flag turned off: the major as typed.
    o->json = json_major_asked(typed_words());
    // The copies here of that folder's runs (`fetch`) follow its status.
    run_on_remote_if_asked(o->remote, ctx, refresh_copies_after(runs_root("")));
    if (o->req.targets.size() == 1)
      if (auto dir = find_site_race(runs_root(o->runs), o->req.targets.front()))
        return site_race_status(*dir, *o, ctx);
    run_status(*o, ctx);
  });
}

}  // namespace ddpctl::cli
