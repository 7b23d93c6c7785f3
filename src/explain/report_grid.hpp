#pragma once
// `ddpctl report SWEEP` of a grid (grid.hpp, sweep_grid.hpp): results by
// parameter. A row per cell (its values, task, state and final metrics: the
// bundled trainer's last epoch line, or the spec's `metric:` patterns over
// its rank-0 log), or, with a seed axis, a row per combination of the other
// keys with each metric's mean ± std over the seeds; the best cell (or
// group) by a metric and direction the user names; table, Markdown, CSV,
// JSON, and a plot of one metric against one key (docs/report.md).
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "slurm/context.hpp"
#include "slurm/job.hpp"
#include "runs/output.hpp"
#include "explain/report.hpp"
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

std::string grid_report_table(const GridReport& r);
std::string grid_report_markdown(const GridReport& r);
std::string grid_report_csv(const GridReport& r);
std::string grid_report_json(const GridReport& r);

// A plot of `metric` against the key `x` (an index into r.keys), one line
// per combination of the other keys (the seed's averaged, with its std as
// error bars): the data (gnuplot blocks, one per line) and the script.
struct GridPlot {
  std::string data, script;
};
GridPlot grid_plot(const GridReport& r, const std::string& metric, size_t x, const std::string& data_file,
                   const std::string& out, const std::string& terminal);

// Slurm's records of a grid's sweep: one squeue for all of its arrays and,
// when some cell is not in its answer, one sacct (and none for the cells
// whose end the ledger keeps).
struct GridRecords {
  std::vector<Job> jobs;          // squeue's, then sacct's
  std::set<std::string> accounted;  // the job ids sacct answered for
  std::vector<std::string> notes;   // why Slurm could not be asked
};
GridRecords read_grid_records(const Run& run, SlurmClient& slurm);

// `ddpctl report SWEEP` of a grid by parameter from the records: each ended
// cell's metrics from its files. Notes go to `out`.
GridReport grid_report_of(const Run& run, const GridRecords& records, const GridReportOptions& options, Output& out);
// read_grid_records, then grid_report_of.
GridReport collect_grid_report(const Run& run, SlurmClient& slurm, const GridReportOptions& options, Output& out);

// Shapes are one more axis of a grid (docs/sweeps.md, "Why one word"): a
// grid key sets the shape when it is one of the fields a shape has (those
// an `alternatives:` or the old `sweep:` entry sets: nodes, gpus_per_node,
// procs_per_node, gpu_type, partition, time, mem, cpus_per_task, label, ...).
bool is_shape_key(const std::string& path);

// How `report SWEEP` shows a grid: by parameter when no key sets the shape;
// as the scaling table (report.hpp, what a `sweep:` experiment's report is)
// when every key does; else both: the table by parameter, then a scaling
// table per combination of the keys that do not set the shape.
enum class GridReportKind { ByParameter, Scaling, Both };
GridReportKind grid_report_kind(const RunGrid& grid);

// One scaling table of a grid's cells: the cells that share the values of
// every key that does not set the shape, a row each (collect_report_row:
// its task's metrics file, Slurm's times, nodes and GPUs, its failure,
// usage and memory), speedup and efficiency against the fewest ranks among them.
struct ScalingTable {
  std::vector<std::pair<std::string, std::string>> values;  // key name -> value, the keys that do not set the shape
  std::string title;  // "lr=0.1,seed=1"; "" for a grid of shapes alone
  std::vector<ReportRow> rows;  // a row per cell, in the grid's order; job_id is the task as Slurm shows it ("123_4")
};
// The tables of a grid (one when every key sets the shape), from the
// records; Slurm is asked only to explain a failure (explain_failure).
// Never throws for want of metrics (finish_report_rows does).
std::vector<ScalingTable> grid_scaling_tables(const Run& run, const GridRecords& records, SlurmClient& slurm,
                                              Output& out, long long now);

// `ddpctl report SWEEP` of a grid, whatever its keys: read_grid_records
// once, then the report by parameter (unless every key sets the shape) and
// the scaling tables (when a key does). A grid of shapes alone is reported
// exactly as a `sweep:` experiment was: finish_report_rows's error when no
// cell has metrics yet, and the options of the report by parameter
// (--best, --seed-key) are refused there.
struct GridReports {
  GridReportKind kind = GridReportKind::ByParameter;
  GridReport by_parameter;           // unless kind is Scaling
  std::vector<ScalingTable> scaling;  // unless kind is ByParameter
};
GridReports collect_grid_reports(const Run& run, SlurmClient& slurm, const GridReportOptions& options, Output& out,
                                 long long now);
// The reports as printed in `format` (table, markdown, csv, json): the
// scaling table alone as report_table() etc. print an experiment's; both:
// the table by parameter, then each scaling table under its values (JSON:
// the grid's object with "scaling": [{"values", "title", "rows"}]). CSV is
// one table: the one by parameter, and a warning in `warnings` says where
// the scaling tables are.
std::string format_grid_reports(const GridReports& r, const std::string& format, std::vector<std::string>& warnings);
// `--plot`: a grid of shapes alone draws the scaling plot (plot_report), any
// other the report by parameter's (plot_grid_report). What to tell the user.
std::vector<std::string> plot_grid_reports(const GridReports& r, const std::string& path, const std::string& metric,
                                           const std::string& x, CommandRunner& runner);

// The grid run `targets` name, if they name one: nullopt when none of them
// is a grid's sweep, or when grids of shapes alone are named with other runs
// (collect_report makes one scaling table of them all); a UserError when
// another grid's sweep is named with others.
std::optional<Run> grid_run_of(const std::vector<std::string>& targets, const std::string& root);

// Draws `--plot` (.svg or .png) through gnuplot: `metric` ("": the --best
// metric, else the first) against the key `x` ("": the first key that is
// not the seed's). Returns what to tell the user.
std::string plot_grid_report(const GridReport& r, const std::string& path, const std::string& metric,
                             const std::string& x, CommandRunner& runner);

}  // namespace ddpctl
