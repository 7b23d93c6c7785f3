#include "explain/cell_files.hpp"

#include <cmath>
#include <filesystem>
#include <fmt/format.h>

#include "base/files.hpp"
#include "runs/job_files.hpp"
#include "spec/metric_pattern.hpp"
#include "explain/report.hpp"
#include "runs/task_logs.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

std::string cell_task_job_id(const CellState& c) {
  const Job& j = c.job;
  if (!c.attempt || !j.array_task_id || !j.array_tasks.empty() || j.id.empty() || j.id.find('_') != std::string::npos)
    return "";
  return j.id;
}

CellMetrics read_cell_metrics(const RunShape& shape, const std::string& task_job_id, size_t tail_bytes) {
  CellMetrics m;
  std::string base = log_base(shape, task_job_id);
  std::string metrics_path = job_files::metrics(base);
  std::error_code ec;
  if (fs::exists(metrics_path, ec)) {
    MetricsFile file = read_metrics(metrics_path);
    m.warnings = file.warnings;
    if (!file.epochs.empty()) {
      const EpochMetrics& last = file.epochs.back();
      auto put = [&](const char* name, const std::optional<double>& v) {
        if (!v) return;
        m.values[name] = *v;
        m.from_file.insert(name);
      };
      put("val_loss", last.val_loss);
      put("val_acc", last.val_acc);
      put("train_loss", last.train_loss);
      put("train_acc", last.train_acc);
      put("img_per_s", last.img_per_s);
      m.epoch = last.epoch;
      if (last.epochs > 0) m.epochs = last.epochs;
      m.source = metrics_path;
    }
  }
  if (!shape.metric) return m;
  std::vector<std::string> paths;
  if (shape.metric->file == "batch") {
    paths.push_back(job_files::batch_out(base));
  } else {
    for (int k = 0, last = latest_logged_attempt(base); k <= last; ++k) paths.push_back(job_files::step_log(base, k, 0));
  }
  for (const auto& path : paths) {
    auto values = read_metric_values(*shape.metric, tail_lines(path, tail_bytes));
    for (const auto& [name, v] : values) {
      m.values[name] = v;
      m.from_file.erase(name);
    }
    if (!values.empty()) m.source = path;
  }
  return m;
}

std::optional<LastMetric> last_metric(const CellMetrics& m, const RunShape& shape) {
  std::vector<std::string> order;
  if (shape.metric) order = metric_names(*shape.metric);
  for (const char* name : {"val_loss", "train_loss", "val_acc", "train_acc"}) order.push_back(name);
  for (const auto& name : order) {
    auto it = m.values.find(name);
    if (it == m.values.end()) continue;
    LastMetric l{name, it->second, {}, {}};
    if (m.from_file.count(name)) l.epoch = m.epoch, l.epochs = m.epochs;
    return l;
  }
  return std::nullopt;
}

namespace {

// Four significant digits, as report's table shows them.
std::string shown(double v) {
  double a = std::fabs(v);
  if (a >= 1000) return fmt::format("{:.1f}", v);
  if (a != 0 && a < 1e-3) return fmt::format("{:.3e}", v);
  return fmt::format("{:.4g}", v);
}

}  // namespace

std::string format_last_metric(const LastMetric& m) {
  std::string text = m.name + " " + shown(m.value);
  if (m.epoch) text += fmt::format(" (epoch {})", *m.epoch);
  return text;
}

std::optional<CellMetricView> cell_metric_view(const Run& run, const CellState& c) {
  std::string own = cell_task_job_id(c);
  const RunShape* shape = c.attempt ? run.shape(c.attempt->shape) : nullptr;
  if (own.empty() || !shape) return std::nullopt;
  // A status refresh reads the end of each log, not all of it.
  CellMetrics m = read_cell_metrics(*shape, own, 256 << 10);
  auto last = last_metric(m, *shape);
  if (!last) return std::nullopt;
  auto opt = [](const std::optional<int>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  nlohmann::json all = nlohmann::json::object();
  for (const auto& [name, v] : m.values) all[name] = v;
  return CellMetricView{format_last_metric(*last),
                        {{"name", last->name},
                         {"value", last->value},
                         {"epoch", opt(last->epoch)},
                         {"epochs", opt(last->epochs)},
                         {"source", m.source},
                         {"all", all}}};
}

}  // namespace ddpctl
