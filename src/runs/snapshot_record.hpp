#pragma once
// A run's snapshot.json: the code its jobs run and where it comes from
// (commit, branch, diff), or why they run in place; written at submit
// (script/snapshot_workdir.hpp's record_snapshot), read by submit (the jobs'
// working directory), status, report and diff.
#include <string>

namespace ddpctl {

// The working directory recorded for a run's jobs (make_workdir); "" for a
// run without a snapshot (its jobs work in the submit folder).
std::string job_workdir(const std::string& run_dir);
// snapshot.json of a run as JSON text; empty when the run has none (older runs).
std::string snapshot_record(const std::string& run_dir);

// One line on a run's code: "snapshot 1a2b3c4d5e6f (commit 89abcdef on main,
// uncommitted changes): 12 files, 3.1 MiB", or "runs in place: <why>".
std::string snapshot_summary(const std::string& run_dir);

// A run's code in a word, for tables: the commit's first 12 characters ("+"
// after it with uncommitted changes), "snapshot:<id 12>" for snapshot.paths,
// "in place", or "" for a run from before snapshots.
std::string code_label(const std::string& run_dir);

}  // namespace ddpctl
