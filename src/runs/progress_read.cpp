#include "runs/progress_read.hpp"

#include <algorithm>
#include <cmath>

#include "base/files.hpp"
#include "runs/job_files.hpp"
#include "runs/task_logs.hpp"

namespace ddpctl {

namespace {

std::optional<double> number(const RegexMatch& m, const CompiledPattern& c, const char* name) {
  auto it = c.groups.find(name);
  if (it == c.groups.end() || !m.matched(it->second)) return std::nullopt;
  try {
    double v = std::stod(m.str(it->second));
    if (std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace

PatternReading read_with_pattern(const ProgressSpec& spec, const std::vector<std::string>& lines) {
  PatternReading r;
  std::string problem;
  auto compiled = compile_progress_pattern(spec.pattern, &problem);
  if (!compiled) return r;
  r.epochs = spec.epochs;
  for (const auto& line : lines) {
    RegexMatch m;
    if (!compiled->regex.search(line, &m)) continue;
    r.matched = true;
    if (auto v = number(m, *compiled, "epoch")) r.epoch = *v + (1 - spec.epoch_base);
    if (auto v = number(m, *compiled, "epochs")) r.epochs = static_cast<int>(*v);
    if (auto v = number(m, *compiled, "step")) r.step = static_cast<long long>(*v);
    if (auto v = number(m, *compiled, "steps")) r.steps = static_cast<long long>(*v);
    if (auto v = number(m, *compiled, "loss")) r.loss = *v;
    if (auto v = number(m, *compiled, "samples_per_s")) r.samples_per_s = *v;
    if (auto v = number(m, *compiled, "it_per_s")) r.it_per_s = *v;
    if (r.epoch) {
      int e = std::max(1, static_cast<int>(std::ceil(*r.epoch - 1e-9)));
      EpochMetrics& em = r.per_epoch[e];
      em.epoch = e;
      if (r.epochs) em.epochs = *r.epochs;
      if (auto v = number(m, *compiled, "samples_per_s")) em.img_per_s = *v;
      if (auto v = number(m, *compiled, "loss")) em.train_loss = *v;
    }
  }
  return r;
}

std::optional<Progress> progress_from(const PatternReading& r, long long elapsed_s) {
  if (!r.matched) return std::nullopt;
  Progress p;
  p.source = "pattern";
  p.loss = r.loss;
  p.samples_per_s = r.samples_per_s.value_or(0);
  p.it_per_s = r.it_per_s.value_or(0);
  p.epochs = r.epochs.value_or(0);
  double done = -1;  // epochs done, fractional
  if (r.step && r.steps && *r.steps > 0) {
    p.step = *r.step;
    p.steps = *r.steps;
    p.epoch = r.epoch ? static_cast<int>(*r.epoch) : 1;  // the epoch in progress
    done = (p.epoch - 1) + static_cast<double>(p.step) / static_cast<double>(p.steps);
  } else if (r.epoch) {
    // Without steps an epoch number is one that ended (the seed's line), or a
    // fraction of the run (Hugging Face's 'epoch': 0.5): the bar shows it.
    double e = *r.epoch;
    p.epoch = std::max(1, static_cast<int>(std::ceil(e - 1e-9)));
    done = e;
    double within = e - std::floor(e);
    p.steps = 100;
    p.step = within > 1e-9 ? std::lround(within * 100) : 100;
    p.percent = true;
  }
  if (p.epochs > 0 && done > 0 && elapsed_s > 0) {
    double fraction = std::min(1.0, done / p.epochs);
    p.eta_s = elapsed_s * (1 - fraction) / fraction;
  }
  return p;
}

std::string progress_log(const RunShape& shape, const std::string& job_id) {
  std::string base = log_base(shape, job_id);
  if (shape.progress && shape.progress->file == "batch") return job_files::batch_out(base);
  return job_files::step_log(base, std::max(0, latest_logged_attempt(base)), 0);
}

std::optional<Progress> pattern_progress(const RunShape& shape, const Job& job, long long now) {
  if (!shape.progress) return std::nullopt;
  std::string path = progress_log(shape, job.id);
  PatternReading r = read_with_pattern(*shape.progress, tail_lines(path));
  long long elapsed = job.start_time && *job.start_time <= now ? now - *job.start_time : 0;
  auto p = progress_from(r, elapsed);
  if (p) p->source = path;
  return p;
}

MetricsFile pattern_metrics(const RunShape& shape, const std::string& job_id, std::string* source) {
  MetricsFile out;
  if (!shape.progress) return out;
  std::string base = log_base(shape, job_id);
  std::vector<std::string> paths;
  if (shape.progress->file == "batch") {
    paths.push_back(job_files::batch_out(base));
  } else {
    for (int k = 0, last = latest_logged_attempt(base); k <= last; ++k) paths.push_back(job_files::step_log(base, k, 0));
  }
  std::map<int, EpochMetrics> by_epoch;
  for (const auto& path : paths) {
    PatternReading r = read_with_pattern(*shape.progress, tail_lines(path));
    for (auto& [e, m] : r.per_epoch) {
      m.world_size = shape.nodes * shape.ranks_per_node;
      by_epoch[e] = m;
    }
    if (r.matched && source) *source = path;
  }
  for (auto& [e, m] : by_epoch) out.epochs.push_back(m);
  return out;
}

}  // namespace ddpctl
