#pragma once
// `ddpctl events`: a run's events (runs/events.hpp) for programs, one JSON
// object a line (docs/json.md "Events"). Without --follow: what happened
// (after --since), then it ends. With --follow: first the current state of
// each run (a `state` event with its status rows), then each new event as
// it is appended, a `heartbeat` while nothing happens, until every run
// followed has ended (with --all: until stopped). Every line carries a
// cursor; --since CURSOR resumes right after that line: no gap, no
// duplicate. A cursor whose place a log no longer has (a log replaced or
// cut) gets `gone` and the run's state again; one ahead of a log, or of
// runs not followed, is an error.
#include <ostream>
#include <string>
#include <vector>

#include "base/clock.hpp"
#include "slurm/slurm.hpp"

namespace ddpctl {

struct EventsRequest {
  std::vector<std::string> targets;  // runs (name, id, path) or sweeps
  // Folders followed as they are: a race across sites' run here, whose log
  // its coordinator writes (the sites' events relayed, and its end); no
  // status of its own.
  std::vector<std::string> race_dirs;
  bool all = false;                  // every run, and those that appear
  bool follow = false;
  std::string since;                 // a cursor; "start": every event; "": per follow
  std::vector<std::string> types;    // only these (empty: all)
  std::string runs_root;
  double heartbeat_s = 15;
  double poll_s = 0.25;              // how often the logs are looked at
  double status_s = 5;               // how often Slurm is asked for the ends of the runs' jobs
  double max_s = 0;                  // stop after this long (0: never)
};

// Streams to `out`; returns when done (or `out` fails: the reader left).
// UserError for bad targets, types or cursors, before anything is printed.
void stream_events(const EventsRequest& req, SlurmClient& slurm, Clock& clock, std::ostream& out);

}  // namespace ddpctl
