// ddpctl events RUN|SWEEP|--all [--follow] [--since CURSOR] [--types ...]:
// the runs' events for programs, one JSON object a line (src/status/events_stream.hpp).
#include <iostream>
#include <memory>

#include "cli/app.hpp"
#include "cli/common.hpp"
#include "sites/sites_status.hpp"
#include "status/events_stream.hpp"

namespace ddpctl::cli {

void setup_events(CLI::App& app, Context& ctx) {
  struct Options {
    EventsRequest req;
    std::string runs;
    RemoteOptions remote;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("events", "Print the events of runs for programs, one JSON line each (docs/json.md)");
  cmd->add_option("targets", o->req.targets, "Runs or sweeps (name, id or path)");
  cmd->add_flag("--all", o->req.all, "Every run, and the runs that appear while it follows");
  cmd->add_flag("-f,--follow", o->req.follow,
                "First the runs' state, then each event as it happens, a heartbeat while none does, until the runs "
                "end");
  cmd->add_option("--since", o->req.since,
                  "Only what came after this cursor (each line's \"cursor\"; `start`: every event)");
  cmd->add_option("--types", o->req.types, "Only events of these types (comma-separated; docs/json.md \"Events\")");
  cmd->add_option("--heartbeat", o->req.heartbeat_s, "With --follow: a heartbeat line after this many seconds without one")
      ->check(CLI::Range(1.0, 3600.0));
  cmd->add_option("--for", o->req.max_s, "Stop following after this many seconds (0: when the runs end)")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_option("--runs", o->runs, "Folder of run records (default: $DDPCTL_RUNS or ./runs)");
  add_remote_options(cmd, o->remote);
  cmd->callback([o, &ctx] {
    run_on_remote_if_asked(o->remote, ctx);
    o->req.runs_root = runs_root(o->runs);
    // A race across sites is followed in its run here: its coordinator
    // relays the sites' events into it (docs/json.md "A race across sites").
    std::vector<std::string> runs;
    for (const auto& t : o->req.targets) {
      if (auto dir = find_site_race(o->req.runs_root, t)) o->req.race_dirs.push_back(*dir);
      else runs.push_back(t);
    }
    o->req.targets = runs;
    o->req.status_s = std::max(1.0, ctx.poll_s);
    stream_events(o->req, ctx.slurm, ctx.clock, std::cout);
  });
}

}  // namespace ddpctl::cli
