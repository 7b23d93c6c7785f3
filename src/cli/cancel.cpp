// ddpctl cancel RUN|JOBID...: scancel, then confirm what Slurm did (src/submit/cancel.hpp).
#include <fmt/format.h>
#include <iostream>
#include <memory>

#include "cli/app.hpp"
#include "submit/cancel.hpp"
#include "sites/site_caller.hpp"
#include "sites/sites_status.hpp"
#include "cli/common.hpp"

namespace ddpctl::cli {

void setup_cancel(CLI::App& app, Context& ctx) {
  struct Options {
    CancelRequest req;
    std::string runs;
    RemoteOptions remote;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("cancel", "Cancel the jobs of runs (or job ids) and confirm they ended");
  cmd->add_option("targets", o->req.targets, "Runs (name, id or path) or job ids")->required();
  cmd->add_option("--cell", o->req.cells, "A grid's sweep: only this cell (by name, e.g. lr=0.1,seed=2); repeatable");
  cmd->add_option("--runs", o->runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  add_remote_options(cmd, o->remote);
  cmd->callback([o, &ctx] {
    run_on_remote_if_asked(o->remote, ctx);
    o->req.runs_root = runs_root(o->runs);
    // A race across sites: every site at once, the coordinator told first.
    if (o->req.targets.size() == 1)
      if (auto dir = find_site_race(o->req.runs_root, o->req.targets.front())) {
        if (!o->req.cells.empty())
          throw UserError(Location{"--cell"}, "",
                          fmt::format("{} is a race across sites, not a grid's sweep here: cancel it whole "
                                      "(`ddpctl cancel {}`), or a cell of the sweep at the site that won it "
                                      "(`ddpctl cancel SITE_RUN --cell CELL --on HOST`; `ddpctl status {}` names both)",
                                      printable(o->req.targets.front()), o->req.targets.front(),
                                      o->req.targets.front()));
        SshSiteCaller sites(race_remote_base(*dir, ctx.env), ctx.runner);
        std::vector<std::string> said;
        int untold = cancel_site_race(*dir, sites, said);
        for (const auto& line : said) std::cout << line << '\n';
        if (untold > 0) throw CLI::RuntimeError(1);
        return;
      }
    ConsoleOutput out;
    cancel_jobs(o->req, ctx, out);
  });
}

}  // namespace ddpctl::cli
