#pragma once
// `ddpctl status`: ddpctl's runs and their jobs as one table, merging what
// squeue and sacct say (job_states.hpp), the trainer's progress file, and the race
// records (race.hpp). The CLI prints the rows as a table or JSON. This
// gathers the runs and asks Slurm; a row's kinds are status_rows.hpp's, a
// job's words status_words.hpp's table.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runs/output.hpp"
#include "slurm/slurm.hpp"
#include "status/status_rows.hpp"

namespace ddpctl {

struct StatusRequest {
  std::vector<std::string> targets;  // runs, experiments or job ids; empty: recent runs
  std::string runs_root;
  // Without targets: every run, not only the active ones and those that
  // ended within the last kRecentRunsS (runs.hpp).
  bool all = false;
  // The rows' JSON is wanted (--json). Without it, rows of ended runs that
  // come from the index (runs.hpp) leave StatusRow::json null.
  bool json = false;
};

struct StatusReport {
  std::vector<StatusRow> rows;
  bool all_done = true;    // every job shown has ended
  std::string slurm_error; // why Slurm could not be asked (rows say UNKNOWN)
  size_t older_runs = 0;   // without targets nor --all: the runs that ended before the window
  std::vector<std::string> notes;  // ends that could not be recorded (asked again next time)
};

// The line below the table when older runs are not shown: "1,488 older
// runs (ended over 24 h ago): --all"; empty when there are none.
std::string older_runs_line(size_t older_runs);

// The rows, as of `now` (Unix seconds).
// Jobs found in squeue by the token of an attempt the ledger holds without
// a job are adopted first (recorded as submitted), unless `adopt` is false.
StatusReport collect_status(const StatusRequest& request, SlurmClient& slurm, long long now);
StatusReport collect_status(const StatusRequest& request, SlurmClient& slurm, long long now, bool adopt);

// The rows as the table the CLI prints: one line each, the header first;
// `paint(text, tone)` colours the STATE cell.
std::vector<std::string> status_table(const std::vector<StatusRow>& rows,
                                      const std::function<std::string(const std::string&, Tone)>& paint);

}  // namespace ddpctl
