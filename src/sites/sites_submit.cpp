#include "sites/sites_submit.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/files.hpp"
#include "base/text.hpp"
#include "runs/run_store.hpp"
#include "script/snapshot.hpp"
#include "spec/spec.hpp"
#include "spec/spec_sites.hpp"
#include "sites/coordinate.hpp"
#include "submit/earlier_runs.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

std::vector<SiteOfRace> sites_of(const RunSpec& spec) {
  std::vector<std::string> hosts = spec_hosts(spec);
  std::vector<SiteOfRace> sites;
  for (const auto& host : hosts) {
    SiteOfRace s{site_name(host, hosts), host, "", {}};
    for (const auto& shape : spec.shapes)
      if (shape.host == host) {
        if (s.labels.empty()) s.remote_dir = shape.remote_dir;
        s.labels.push_back(shape.label);
      }
    sites.push_back(s);
  }
  return sites;
}

std::vector<std::string> site_submit_argv(const SitesSubmitRequest& req, const SiteOfRace& site,
                                          const std::string& coordinator) {
  std::vector<std::string> argv = {req.self, req.verb, req.spec, "--site", site.host, "--coordinator", coordinator,
                                   "--gate-timeout", std::to_string(req.gate_s)};
  for (const auto& s : req.sets) argv.insert(argv.end(), {"--set", s});
  if (!req.snapshot) argv.push_back("--no-snapshot");
  if (!req.preflight) argv.push_back("--no-preflight");
  // Another race of the same spec: each site submits its shapes anew too.
  if (req.again) argv.push_back("--again");
  argv.insert(argv.end(), {"--on", site.host});
  if (!site.remote_dir.empty()) argv.insert(argv.end(), {"--remote-dir", site.remote_dir});
  return argv;
}

std::vector<std::string> coordinator_start_argv(const std::string& self, const std::string& runs_root,
                                                const std::string& id, const std::string& log) {
  // sh sets the output first; setsid -f starts the coordinator in a session
  // of its own and returns at once, so it outlives this ddpctl and the terminal.
  return {"sh", "-c", "exec setsid -f \"$0\" coordinate \"$1\" --runs \"$2\" >>\"$3\" 2>&1 </dev/null",
          self, id, runs_root, log};
}

namespace {

// An earlier race of the same spec whose coordinator has not finished.
std::optional<std::string> unfinished_race(const std::string& root, const std::string& identity) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const fs::path record = entry.path() / "sites.json";
    if (!fs::exists(record, ec) || fs::exists(entry.path() / "coordinator.done", ec)) continue;
    try {
      if (nlohmann::json::parse(read_file(record.string())).value("identity", "") == identity)
        return entry.path().filename().string();
    } catch (const std::exception&) {
    }
  }
  return std::nullopt;
}

void start_coordinator(const SitesSubmitRequest& req, const std::string& id, Context& ctx, Output& out) {
  const std::string dir = req.runs_root + "/" + id;
  if (auto pid = running_coordinator(dir)) {
    out.note(fmt::format("the race's coordinator runs (pid {}); its log: {}/coordinator.log", *pid, dir));
    return;
  }
  CommandResult r = ctx.runner.run(coordinator_start_argv(req.self, absolute_path(req.runs_root), id,
                                                          absolute_path(dir + "/coordinator.log")),
                                   std::chrono::seconds(30));
  if (!r.ok())
    out.warning(fmt::format("the coordinator could not be started ({}): no job trains until one runs; "
                            "`ddpctl coordinate {}` runs it",
                            r.describe(), id));
}

nlohmann::json race_record(const SitesSubmitRequest& req, const RunSpec& spec, const std::string& id,
                           const std::string& identity, const std::vector<SiteOfRace>& sites) {
  nlohmann::json j = {{"id", id},         {"verb", req.verb}, {"spec", req.spec},     {"sets", req.sets},   {"identity", identity},
                      {"name", spec.name}, {"created_at", utc_now_iso()}, {"gate_s", req.gate_s}, {"poll_s", req.poll_s},
                      {"cwd", fs::current_path().string()}};
  nlohmann::json js = nlohmann::json::array();
  for (const auto& s : sites)
    js.push_back({{"name", s.name}, {"host", s.host}, {"remote_dir", s.remote_dir}, {"labels", s.labels}});
  j["sites"] = js;
  // A winner requeued races the sites again, as often as requeue: lets a
  // requeued winner race again within a site (a grid's first cell: never).
  j["rounds"] = req.verb == "submit" && spec.requeue ? 1 + spec.requeue->max_requeues : 1;
  return j;
}

// One site's submission, its log and exit status recorded in the race's
// folder. It runs on a thread of its own: nothing thrown may leave it (that
// would end ddpctl with jobs queued and nothing said), a failure is this
// site's.
CommandResult submit_to_site(const SitesSubmitRequest& req, const SiteOfRace& site, const std::string& id,
                             Context& ctx) {
  const std::string dir = req.runs_root + "/" + id;
  CommandResult r;
  try {
    r = ctx.runner.run(site_submit_argv(req, site, id), std::chrono::minutes(30));
  } catch (const std::exception& e) {
    r.exit_code = -1;
    r.err = std::string("ddpctl could not run its submission: ") + e.what();
  }
  try {
    write_file_atomic(fmt::format("{}/site.{}.submit.log", dir, site.name), r.out + r.err);
    write_file_atomic(fmt::format("{}/site.{}.submit.rc", dir, site.name), std::to_string(r.exit_code) + "\n");
  } catch (const std::exception& e) {
    // The jobs there are queued all the same: said, never hidden.
    r.out += std::string("\nddpctl: warning: its outcome could not be recorded here: ") + e.what();
    r.err += std::string("\nits outcome could not be recorded here: ") + e.what();
  }
  return r;
}

}  // namespace

void submit_across_sites(const SitesSubmitRequest& req, Context& ctx, Output& out) {
  const std::string text = read_file(req.spec);
  RunSpec spec = parse_run_spec(req.spec, text, req.sets);
  std::vector<SiteOfRace> sites = sites_of(spec);
  for (const auto& s : sites)
    if (s.host.empty())
      throw UserError(spec.where_of("on"), "on",
                      fmt::format("shape {} names no site while others do: in a race across sites every shape has "
                                  "its login host (`on:` at the top level gives every shape one)",
                                  s.labels.front()));
  std::vector<std::string> identity_sets = req.sets;
  identity_sets.push_back("--across-sites");
  if (req.verb != "submit") identity_sets.push_back("--" + req.verb);
  const std::string identity = run_identity({{req.spec, text}}, identity_sets, "");
  std::string id;
  {
    IdentityLock lock(req.runs_root, identity, ctx, out);
    if (auto earlier = unfinished_race(req.runs_root, identity); earlier && !req.again) {
      out.line(fmt::format("already submitted: run {} races this spec across {} site(s); not submitting it again "
                           "(--again submits another)",
                           *earlier, sites.size()));
      start_coordinator(req, *earlier, ctx, out);
      return;
    }
    // The code once, here: each site's submission finds it in the store.
    take_snapshot(spec, fs::current_path().string(), req.runs_root, !req.snapshot, ctx.runner);
    id = new_run_id(spec.name, utc_now_iso());
    fs::create_directories(req.runs_root + "/" + id);
    write_file_atomic(req.runs_root + "/" + id + "/spec.yaml", text);
    write_file_atomic(req.runs_root + "/" + id + "/sites.json",
                      race_record(req, spec, id, identity, sites).dump(2) + "\n");
  }
  const std::string dir = req.runs_root + "/" + id;
  out.line(fmt::format("race {} across {} site(s): {}", id, sites.size(), [&] {
    std::vector<std::string> s;
    for (const auto& site : sites) s.push_back(fmt::format("{} ({})", site.name, join(site.labels, ", ")));
    return join(s, "; ");
  }()));
  start_coordinator(req, id, ctx, out);
  std::mutex said;
  int submitted = 0;
  std::vector<std::thread> threads;
  for (const auto& site : sites)
    threads.emplace_back([&, site] {
      CommandResult r = submit_to_site(req, site, id, ctx);
      std::lock_guard<std::mutex> hold(said);
      if (r.ok()) {
        ++submitted;
        for (const auto& l : split(trim(r.out), '\n')) out.line(fmt::format("site {}: {}", site.name, plain_line(l, 2000)));
      } else {
        std::vector<std::string> lines;
        for (const auto& l : split(trim(r.err + "\n" + r.out), '\n'))
          if (!trim(l).empty()) lines.push_back(plain_line(l, 2000));
        out.warning(fmt::format("site {} ({}) is left out of the race: its submission failed: {}", site.name,
                                site.host, join(lines, "\n  ")));
      }
    });
  for (auto& t : threads) t.join();
  if (submitted == 0)
    throw UserError(Location{dir + "/sites.json"}, "",
                    "no site could be submitted to (above); nothing is queued. Run the same `ddpctl submit` again "
                    "once they can be reached");
  out.line(fmt::format("  the first job to start at any site trains{}; the others stand down (docs/race.md \"Across "
                       "sites\")\n  coordinator: {}/coordinator.log (`ddpctl coordinate {}` runs it again)",
                       req.verb == "sweep" ? " the grid's first cell and submits the other cells on its site and shape"
                                           : "",
                       dir, id));
}

}  // namespace ddpctl
