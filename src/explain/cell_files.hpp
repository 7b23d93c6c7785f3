#pragma once
// What a grid cell's array task left in files (docs/sweeps.md): its task's
// own job id names them (as any job's, job_files.hpp), and its metrics are
// the bundled trainer's metrics file or the spec's `metric:` patterns over
// its rank-0 log. `report SWEEP` (every metric, final) and `status SWEEP`
// (the last one, while it runs too) read them the same way; neither asks
// Slurm anything here.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runs/run_record.hpp"
#include "explain/status_grid.hpp"

namespace ddpctl {

// The task's own job id a cell's record carries, or "" (never submitted,
// pending in its array's collapsed record, or unknown: no file is named by
// it yet). The last task of an array has the array's own id.
std::string cell_task_job_id(const CellState& cell);

struct CellMetrics {
  std::map<std::string, double> values;
  std::optional<int> epoch, epochs;   // the metrics file's last epoch, of how many
  std::set<std::string> from_file;    // the metrics read from the metrics file (not a pattern)
  std::string source;                 // the file the latest values came from; "" none
  std::vector<std::string> warnings;  // metrics lines that could not be read
};
// The metrics file's last epoch (the bundled trainer), then the shape's
// `metric:` patterns over its rank-0 log (or batch log), every attempt's, a
// later match winning; `tail_bytes` of each log at most.
CellMetrics read_cell_metrics(const RunShape& shape, const std::string& task_job_id,
                              size_t tail_bytes = 4 << 20);

// The one metric a status row shows: the first of the spec's `metric:`
// names that has a value, else the trainer's val_loss, train_loss,
// val_acc, train_acc; nullopt when there is none.
struct LastMetric {
  std::string name;
  double value = 0;
  std::optional<int> epoch, epochs;  // from the metrics file
};
std::optional<LastMetric> last_metric(const CellMetrics& metrics, const RunShape& shape);
// "val_loss 0.412 (epoch 3)", "acc 0.91" (a pattern's: no epoch).
std::string format_last_metric(const LastMetric& m);

// A cell row's metric for `status SWEEP`: the words for INFO and the JSON
// ({"name", "value", "epoch", "epochs", "source", "all": {...}}); nullopt
// when the cell has none (yet). File reads only.
struct CellMetricView {
  std::string text;
  nlohmann::json json;
};
std::optional<CellMetricView> cell_metric_view(const Run& run, const CellState& cell);

}  // namespace ddpctl
