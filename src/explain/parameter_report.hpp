#pragma once
// `ddpctl report SWEEP` of a grid (spec/grid.hpp): results by parameter. A
// row per cell (its values, task, state and final metrics: the bundled
// trainer's last epoch line, or the spec's `metric:` patterns over its
// rank-0 log), or, with a seed axis, a row per combination of the other
// keys with each metric's mean ± std over the seeds; the best cell (or
// group) by a metric and direction the user names (docs/report.md). It is
// printed by parameter_table.hpp and drawn by parameter_plot.hpp.
// Reading the cells' rows from Slurm and their files is the workflow's
// (report/report_grid_collect.hpp).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runs/run_record.hpp"

namespace ddpctl {

// `--best val_loss:min`: a metric and which way is better.
struct BestBy {
  std::string metric;
  bool maximize = false;
};
// "val_loss:min" / "acc:max"; a UserError at --best otherwise.
BestBy parse_best(const std::string& text);

struct GridReportOptions {
  std::optional<std::string> seed_key;  // a key's name or path; "" or "none": no grouping; unset: by name
  std::optional<BestBy> best;
};

struct GridCellRow {
  int index = 0;
  std::string name;                 // "lr=0.1,seed=2"
  std::vector<std::string> values;  // per grid key, "" where the cell does not set it
  std::string task;                 // "123_4" as Slurm shows the task; "" never submitted
  std::string task_job_id;          // the task's own job id (names its logs); "" when Slurm did not say
  std::string state;                // "COMPLETED", "RUNNING", ..., "NOT SUBMITTED", "UNKNOWN"
  bool ended = false;               // a final state: its metrics are final
  bool completed = false;           // only these count for means and best
  std::map<std::string, double> metrics;
  std::string source;               // the metrics file or log read; "" none
  bool best = false;
};

struct MetricStat {
  double mean = 0;
  std::optional<double> std;  // sample standard deviation; none for n = 1
  int n = 0;
};
// Mean and sample std of `values` (n >= 1).
MetricStat metric_stat(const std::vector<double>& values);

// The cells that share every key's value but the seed's.
struct GridGroupRow {
  std::vector<std::string> values;  // per grid key; the seed key's is ""
  std::vector<size_t> cells;        // indexes into GridReport::cells
  int completed = 0;                // of them, COMPLETED (what the means are over)
  std::map<std::string, MetricStat> metrics;
  bool best = false;
};

struct GridReport {
  std::string run_id, summary;  // summary: "4 cells: 3 done, 1 failed"
  std::string kind = "sweep";   // what the header calls it: "sweep", or "study" (report_study.hpp)
  std::vector<std::string> keys, key_paths;  // names as cell names show them, and paths
  std::vector<std::string> metrics;          // every metric a cell has, in a stable order
  std::vector<GridCellRow> cells;
  std::optional<size_t> seed_key;            // index into keys
  std::vector<GridGroupRow> groups;          // with a seed key
  std::optional<BestBy> best;
  std::string best_line;                     // "best by val_loss (min): lr=0.1 ..."; "" without --best
  std::vector<std::string> notes;
};

// The key `option` names (by name or path), or the default seed axis: the
// grid key named `seed` or ending in `seed` (trainer.seed, env.SEED), case
// aside. A name no key has is a UserError listing the keys.
std::optional<size_t> seed_key_of(const RunGrid& grid, const std::optional<std::string>& option);

// Builds the report from the cells' rows (values, state, metrics filled):
// groups by the seed key, marks the best. `--best` with a metric no cell
// has is a UserError listing the metrics found.
GridReport make_grid_report(const Run& run, std::vector<GridCellRow> cells, const GridReportOptions& options);

// How the report shows numbers (its table, Markdown and plot share them): a
// value as a person reads it (four significant digits, no exponent for
// throughputs), a mean ± std, and full precision for machines (CSV, the
// plot's data).
std::string shown_value(double v);
std::string shown_stat(const MetricStat& s);
std::string exact_value(double v);
// "lr=0.1,bs=32" of the values at `which` keys (indexes into r.keys); a key
// whose value is "" is left out.
std::string values_name(const GridReport& r, const std::vector<std::string>& values, const std::vector<size_t>& which);
// Every key's index but `skip`'s.
std::vector<size_t> keys_but(const GridReport& r, std::optional<size_t> skip);

}  // namespace ddpctl
