#pragma once
// `ddpctl report SWEEP` of a grid, whatever its keys: Slurm's records of its
// arrays, the report by parameter (parameter_report.hpp) from each cell's
// files, and the scaling tables of the keys that set the shape (report.hpp).
// Implemented by report_grid_collect.cpp (docs/report.md).
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "slurm/context.hpp"
#include "slurm/slurm_job.hpp"
#include "runs/output.hpp"
#include "explain/parameter_report.hpp"
#include "explain/report.hpp"
#include "runs/run_record.hpp"

namespace ddpctl {

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
