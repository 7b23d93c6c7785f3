#pragma once
// `ddpctl diff RUN_A RUN_B`: why is this run slower, or different? The specs
// as submitted, the code each ran (their snapshots), and what their jobs'
// scripts set (modules, environment, NCCL, launch), in one view.
#include <string>

#include "base/process.hpp"
#include "runs/run_store.hpp"

namespace ddpctl {

struct RunDiff {
  std::string text;    // sections "spec", "code", "environment", "script", each a unified diff or "same"
  bool same = true;    // nothing differs
};

// Compares two runs with `diff -u` / `diff -ruN` (diffutils) through
// `runner`; the snapshot folders are shown as A/ and B/.
RunDiff diff_runs(const Run& a, const Run& b, CommandRunner& runner);

}  // namespace ddpctl
