// ddpctl fetch RUN... --on HOST: copies runs' records, metrics and plots
// from the login host's runs folder into this folder's (src/remote/remote_fetch.hpp);
// without --on, a race across sites: its winner's run from its site.
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <memory>

#include "cli/app.hpp"
#include "cli/common.hpp"
#include "cli/json_output.hpp"
#include "remote/remote_fetch.hpp"
#include "base/text.hpp"
#include "runs/run_store.hpp"
#include "sites/site_caller.hpp"
#include "sites/sites_status.hpp"

namespace ddpctl::cli {

namespace {

struct FetchOptions {
  std::vector<std::string> targets;
  std::string runs;
  RemoteOptions remote;
};

// Without --on: races across sites (docs/race.md "Across sites"), each its
// winner's run, from the site where it won, into the race's own folder
// (runs/RACE/fetched/SITE_RUN): the run a site names is checked against the
// one the race recorded for it, and a fetch of a race writes nothing else.
void fetch_site_races(const FetchOptions& o, Context& ctx) {
  std::vector<std::string> dirs;
  for (const auto& t : o.targets) {
    std::optional<std::string> dir = find_site_race(runs_root(o.runs), t);
    if (!dir)
      throw UserError(Location{"--on"}, "", fmt::format("fetch brings runs from a login host: name it with --on HOST "
                                                        "({} is not a race across sites here)", printable(t)));
    dirs.push_back(*dir);
  }
  nlohmann::json fetched = nlohmann::json::array();
  for (const auto& dir : dirs) {
    FetchRequest f;
    f.target = race_remote_base(dir, ctx.env);
    SshSiteCaller sites(f.target, ctx.runner);
    WinnerSite w = winner_site(dir, sites, "fetch");
    std::cout << fmt::format("race {}: won by job {} at site {}; its run there is {}\n",
                             std::filesystem::path(dir).filename().string(), w.job, w.site.name, w.run);
    f.target.host = w.site.host;
    f.target.dir_option = w.site.remote_dir;
    f.targets = {w.run};
    f.runs_option = o.runs;
    // Only under the race: what a site names never replaces a run here.
    f.local_runs_root = dir + "/fetched";
    std::filesystem::create_directories(f.local_runs_root);
    for (const auto& id : fetch_runs(f, ctx.runner, std::cout))
      fetched.push_back({{"run", id}, {"dir", f.local_runs_root + "/" + id}, {"race", std::filesystem::path(dir).filename().string()},
                         {"site", w.site.name}, {"job", w.job}});
  }
  json_fact("fetched", fetched);
}

}  // namespace

void setup_fetch(CLI::App& app, Context& ctx) {
  using Options = FetchOptions;
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "fetch", "Copy runs' records, metrics and plots from the login host (--on HOST) into this folder's runs/; a "
               "race across sites: its winner's run, from its site");
  cmd->add_option("runs", o->targets, "Runs (id, name or prefix: its newest run), or races across sites")->required();
  cmd->add_option("--runs", o->runs, "Folder of run records, there and here (default: runs)");
  add_remote_options(cmd, o->remote);
  cmd->callback([o, &ctx] {
    if (!remote_asked(o->remote)) return fetch_site_races(*o, ctx);
    FetchRequest f;
    f.target = remote_target(o->remote, ctx);
    f.targets = o->targets;
    f.runs_option = o->runs;
    f.local_runs_root = runs_root(o->runs);
    nlohmann::json fetched = nlohmann::json::array();
    for (const auto& id : fetch_runs(f, ctx.runner, std::cout))
      fetched.push_back({{"run", id}, {"dir", f.local_runs_root + "/" + id}});
    json_fact("fetched", fetched);
  });
}

}  // namespace ddpctl::cli
