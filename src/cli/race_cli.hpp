#pragma once
// `ddpctl race`, which `ddpctl submit` of a spec with alternatives also runs.
#include <string>
#include <vector>

namespace ddpctl::cli {

struct RaceOptions {
  std::vector<std::string> specs;
  std::vector<std::string> sets;
  std::string runs, templates;
  bool wait = false, follow = false, dry_run = false, no_preflight = false, again = false;
  bool rank_by_estimate = false, plan = false;
};

void run_race(const RaceOptions& o);

}  // namespace ddpctl::cli
