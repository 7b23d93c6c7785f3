#pragma once
// What `ddpctl sweep SPEC` is asked to do, shared by a `sweep:` list's sweep
// (sweep.hpp) and a grid's (sweep_grid.hpp).
#include <string>
#include <vector>

#include "script/render.hpp"

namespace ddpctl {

struct SweepRequest {
  std::string spec;
  std::vector<std::string> sets;
  std::string name;                // experiment name; empty: the spec's name
  std::vector<std::string> only;   // labels; empty: every shape
  std::string runs_root, templates_dir;
  bool one_at_a_time = false;      // each run after the previous ends (afterany)
  bool dry_run = false, preflight = true, again = false;
  bool snapshot = true;            // false: --no-snapshot
  std::string snapshot_from;       // --snapshot-from (take_snapshot's `given`)
  AcrossSites across;              // one site of a grid raced across sites (--site, --coordinator)
};

}  // namespace ddpctl
