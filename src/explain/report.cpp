#include "explain/report.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "base/json_fields.hpp"
#include "explain/mfu.hpp"
#include "runs/job_files.hpp"
#include "base/diagnostics.hpp"
#include "base/files.hpp"
#include "runs/snapshot_record.hpp"
#include "runs/usage.hpp"
#include "base/text.hpp"

namespace ddpctl {

using nlohmann::json;
using json_field::number;

MetricsFile read_metrics(const std::string& path) {
  MetricsFile out;
  std::ifstream in(path);
  std::map<int, EpochMetrics> by_epoch;
  std::vector<int> order;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json j;
    try {
      j = json::parse(line);
    } catch (const json::exception& e) {
      out.warnings.push_back(fmt::format("{}:{}: not a JSON line, skipped (a line still being written?)", path, line_no));
      continue;
    }
    if (!j.is_object() || !j.contains("epoch") || !j["epoch"].is_number_integer()) {
      out.warnings.push_back(fmt::format("{}:{}: epoch: missing or not an integer, line skipped", path, line_no));
      continue;
    }
    EpochMetrics m;
    m.epoch = j["epoch"].get<int>();
    m.epochs = j.value("epochs", 0);
    m.world_size = j.value("world_size", 0);
    m.train_loss = number(j, "train_loss");
    m.val_loss = number(j, "val_loss");
    m.train_acc = number(j, "train_acc");
    m.val_acc = number(j, "val_acc");
    m.img_per_s = number(j, "img_per_s");
    m.epoch_s = number(j, "epoch_s");
    if (auto p = j.find("peak_mem_mib"); p != j.end() && p->is_array())
      for (const auto& v : *p)
        if (v.is_number()) m.peak_mem_mib.push_back(v.get<double>());
    if (auto r0 = j.find("rank0_mem_mib"); r0 != j.end() && r0->is_object()) {
      m.mem0_peak = number(*r0, "peak");
      m.mem0_avg = number(*r0, "avg");
      m.mem0_mode = number(*r0, "mode");
    }
    if (auto k = j.find("mem_kind"); k != j.end() && k->is_string()) m.mem_kind = k->get<std::string>();
    if (auto k = j.find("model"); k != j.end() && k->is_string()) m.model = k->get<std::string>();
    if (auto k = j.find("device"); k != j.end() && k->is_string()) m.device = k->get<std::string>();
    if (auto k = j.find("amp"); k != j.end() && k->is_string()) m.amp = k->get<std::string>();
    if (auto f = number(j, "flops_per_sample"); f && *f > 0) m.flops_per_sample = f;
    m.rendezvous_s = number(j, "rendezvous_s");
    m.first_step_s = number(j, "first_step_s");
    if (auto p = j.find("step_time_s"); p != j.end() && p->is_array())
      for (const auto& v : *p)
        if (v.is_number()) m.step_time_max = std::max(m.step_time_max.value_or(0.0), v.get<double>());
    m.params = number(j, "params");
    m.batch_size = number(j, "batch_size");
    m.steps = number(j, "steps");
    if (auto t = number(j, "time")) m.time = static_cast<long long>(*t);
    if (!by_epoch.count(m.epoch)) order.push_back(m.epoch);
    by_epoch[m.epoch] = m;  // a requeued attempt re-running an epoch replaces it
  }
  std::sort(order.begin(), order.end());
  for (int e : order) out.epochs.push_back(by_epoch[e]);
  return out;
}

std::optional<double> mean_throughput(const MetricsFile& metrics) {
  // The first epoch carries start-up and warm-up: left out when there are more.
  double sum = 0;
  int n = 0;
  for (size_t i = metrics.epochs.size() > 1 ? 1 : 0; i < metrics.epochs.size(); ++i)
    if (metrics.epochs[i].img_per_s) sum += *metrics.epochs[i].img_per_s, ++n;
  return n > 0 ? std::optional<double>(sum / n) : std::nullopt;
}

namespace {

// The optimizer step over the epochs after the first (all, if one): the
// slowest rank's mean, else the epoch's time over its steps.
std::optional<double> mean_step_s(const MetricsFile& metrics) {
  double sum = 0;
  int n = 0;
  for (size_t i = metrics.epochs.size() > 1 ? 1 : 0; i < metrics.epochs.size(); ++i) {
    const EpochMetrics& e = metrics.epochs[i];
    auto s = e.step_time_max ? e.step_time_max
                             : e.epoch_s && e.steps && *e.steps > 0 ? std::optional<double>(*e.epoch_s / *e.steps)
                                                                    : std::nullopt;
    if (s) sum += *s, ++n;
  }
  return n > 0 ? std::optional<double>(sum / n) : std::nullopt;
}

}  // namespace

ReportRow make_report_row(const Run& run, const Attempt* attempt, const Job* job, const MetricsFile* metrics,
                          long long now) {
  ReportRow r;
  r.run_id = run.id;
  r.code = code_label(run.dir);
  const RunShape* shape = attempt ? run.shape(attempt->shape) : (run.shapes.empty() ? nullptr : &run.shapes.front());
  if (shape) {
    r.label = shape->label;
    r.partition = shape->partition;
    r.nodes = shape->nodes;
    r.ranks_per_node = shape->ranks_per_node;
    r.gpus_per_node = shape->gpus_per_node;
  }
  r.gpus = r.nodes * r.gpus_per_node;
  if (!attempt) {
    r.problem = "no job was submitted";
    return r;
  }
  r.job_id = attempt->job_id;
  if (shape) r.metrics_path = job_files::metrics(job_files::log_base(shape->output_dir, shape->job_name, r.job_id));
  if (job) {
    r.state = job->state;
    if (job->gpus > 0) r.gpus = job->gpus;
    if (job->start_time && *job->start_time <= now) {
      bool ended = is_terminal(job->state) && job->end_time && *job->end_time >= *job->start_time;
      r.wall_s = static_cast<double>((ended ? *job->end_time : now) - *job->start_time);
      r.wall_source = ended ? "slurm" : "slurm, still running";
    }
  }
  if (!metrics || metrics->epochs.empty()) {
    r.problem = job && is_terminal(job->state)
                    ? "ended without metrics: the bundled trainer writes a line per epoch to " + r.metrics_path +
                          "; your program can too (one JSON line per epoch to $DDPCTL_METRICS_FILE), or the spec's "
                          "progress: and metric: patterns read them from its log (docs/report.md)"
                    : "no metrics yet at " + r.metrics_path;
  } else {
    r.has_metrics = true;
    const EpochMetrics& first = metrics->epochs.front();
    const EpochMetrics& last = metrics->epochs.back();
    r.epochs_done = last.epoch;
    r.epochs = last.epochs;
    r.train_loss = last.train_loss;
    r.val_loss = last.val_loss;
    r.train_acc = last.train_acc;
    r.val_acc = last.val_acc;
    r.img_per_s = mean_throughput(*metrics);
    r.step_s = mean_step_s(*metrics);
    r.params = last.params;
    r.flops_per_sample = last.flops_per_sample;
    if (shape) {
      Mfu mfu = model_flops_utilisation(*shape, last, r.img_per_s);
      r.mfu = mfu.value;
      r.mfu_words = mfu.words;
    }
    r.batch_per_rank = last.batch_size;
    if (last.img_per_s && last.epoch_s) r.images_per_epoch = *last.img_per_s * *last.epoch_s;
    r.mem0_peak = last.mem0_peak;
    r.mem0_avg = last.mem0_avg;
    r.mem0_mode = last.mem0_mode;
    if (!last.peak_mem_mib.empty()) r.mem_max = *std::max_element(last.peak_mem_mib.begin(), last.peak_mem_mib.end());
    r.mem_kind = last.mem_kind;
    r.rendezvous_s = first.rendezvous_s;
    r.first_step_s = first.first_step_s;
    // Without Slurm's times: from the process start (first epoch's end minus
    // its length and the time to its first step) to the last epoch's end.
    if (!r.wall_s && first.time > 0 && last.time > 0) {
      double start = static_cast<double>(first.time) - first.epoch_s.value_or(0) - first.first_step_s.value_or(0);
      r.wall_s = static_cast<double>(last.time) - start;
      r.wall_source = "metrics";
    }
  }
  if (r.wall_s) {
    if (r.gpus > r.nodes * r.gpus_per_node && r.gpus_per_node > 0)
      r.idle_gpu_hours = *r.wall_s / 3600.0 * (r.gpus - r.nodes * r.gpus_per_node);
    if (r.gpus > 0) r.gpu_hours = *r.wall_s / 3600.0 * r.gpus;
    r.node_hours = *r.wall_s / 3600.0 * r.nodes;
  }
  return r;
}

void add_usage(ReportRow& row, const std::string& log_base,
               const std::map<std::string, std::vector<UsageSample>>& samples) {
  row.usage_base = log_base;
  UsageSummary u = summarize_usage(samples);
  if (u.samples == 0) return;
  row.gpu_util_mean = u.gpu_util_mean;
  row.gpu_mem_peak_mib = u.gpu_mem_peak_mib;
  row.gpu_mem_mean_mib = u.gpu_mem_mean_mib;
  row.gpu_mem_mode_mib = u.gpu_mem_mode_mib;
  row.cpu_pct_mean = u.cpu_pct_mean;
  row.rss_peak_bytes = u.rss_peak_bytes;
}

void compute_scaling(std::vector<ReportRow>& rows) {
  // Within the rows that ran the same code: a speedup across two programs
  // would measure the change, not the scaling.
  std::set<std::string> codes;
  for (const auto& r : rows) codes.insert(r.code);
  for (const auto& code : codes) {
    const ReportRow* base = nullptr;
    for (const auto& r : rows)
      if (r.code == code && r.img_per_s && *r.img_per_s > 0 && (!base || r.world() < base->world())) base = &r;
    if (!base) continue;
    double base_thr = *base->img_per_s;
    int base_world = base->world();
    for (auto& r : rows) {
      if (r.code != code || !r.img_per_s) continue;
      r.speedup = *r.img_per_s / base_thr;
      r.efficiency = *r.speedup / (static_cast<double>(r.world()) / base_world);
    }
  }
}

std::string mixed_code_note(const std::vector<ReportRow>& rows) {
  std::vector<std::string> codes;
  for (const auto& r : rows)
    if (std::find(codes.begin(), codes.end(), r.code) == codes.end()) codes.push_back(r.code);
  if (codes.size() < 2) return "";
  std::vector<std::string> groups;
  for (const auto& c : codes) {
    std::vector<std::string> labels;
    for (const auto& r : rows)
      if (r.code == c) labels.push_back(r.label);
    groups.push_back(fmt::format("{} ({})", c.empty() ? "unrecorded" : c, join(labels, ", ")));
  }
  return "these rows ran different code: " + join(groups, "; ") +
         "; speedup and efficiency are computed within each (`ddpctl diff RUN_A RUN_B` shows what changed)";
}

std::string mixed_provenance_note(const std::vector<ReportRow>& rows) {
  // Every field any row has, in first-seen order, with its value per row ("" where absent).
  std::vector<std::string> keys;
  std::vector<const ReportRow*> recorded;
  for (const auto& r : rows) {
    if (!r.provenance) continue;
    recorded.push_back(&r);
    for (const auto& [k, v] : comparable_fields(*r.provenance))
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  }
  if (recorded.size() < 2) return "";
  std::vector<std::string> differing;
  for (const auto& k : keys) {
    std::vector<std::pair<std::string, std::vector<std::string>>> values;  // value -> its rows
    for (const ReportRow* r : recorded) {
      std::string v;
      for (const auto& [name, value] : comparable_fields(*r->provenance))
        if (name == k) v = value;
      auto it = std::find_if(values.begin(), values.end(), [&](const auto& p) { return p.first == v; });
      if (it == values.end()) values.push_back({v, {}}), it = values.end() - 1;
      it->second.push_back(r->label);
    }
    if (values.size() < 2) continue;
    std::vector<std::string> parts;
    for (const auto& [v, labels] : values)
      parts.push_back(fmt::format("{} ({})", v.empty() ? "none" : plain_line(v, 60), join(labels, ", ")));
    differing.push_back(k + " " + join(parts, " vs "));
  }
  if (differing.empty()) return "";
  return "these rows ran in different environments: " + join(differing, "; ");
}

std::vector<Prediction> predict(const std::vector<ReportRow>& measured, const std::vector<PlanShape>& shapes,
                                int epochs) {
  const ReportRow* base = nullptr;
  for (const auto& r : measured)
    if (r.img_per_s && r.efficiency && r.images_per_epoch && (!base || r.world() < base->world())) base = &r;
  if (!base) throw UserError("no measured run has a throughput and an epoch time to predict from");
  auto distance = [](int a, int b) { return std::abs(std::log2(static_cast<double>(a)) - std::log2(static_cast<double>(b))); };
  std::vector<Prediction> out;
  for (const auto& s : shapes) {
    Prediction p;
    p.shape = s;
    const ReportRow* own = nullptr;
    for (const auto& r : measured)
      if (r.efficiency && r.nodes == s.nodes && r.ranks_per_node == s.ranks_per_node) own = &r;
    if (own) {
      p.efficiency = *own->efficiency;
      p.efficiency_from = "measured";
    } else {
      // Nearest measured multi-rank shape, on the same side of the node boundary first.
      const ReportRow* near = nullptr;
      for (int pass = 0; pass < 2 && !near; ++pass)
        for (const auto& r : measured) {
          if (!r.efficiency || r.world() == base->world()) continue;
          if (pass == 0 && (r.nodes > 1) != (s.nodes > 1)) continue;
          if (!near || distance(r.world(), s.world()) < distance(near->world(), s.world())) near = &r;
        }
      if (near) {
        p.efficiency = *near->efficiency;
        p.efficiency_from = "from shape " + near->label;
      } else {
        p.efficiency = 1;
        p.efficiency_from = s.world() == base->world() ? "as measured" : "assumed ideal";
      }
    }
    p.img_per_s = *base->img_per_s * static_cast<double>(s.world()) / base->world() * p.efficiency;
    p.time_s = epochs * *base->images_per_epoch / p.img_per_s + base->first_step_s.value_or(0);
    p.node_hours = p.time_s / 3600 * s.nodes;
    if (s.gpus_per_node > 0) p.gpu_hours = p.time_s / 3600 * s.nodes * s.gpus_per_node;
    out.push_back(p);
  }
  return out;
}

}  // namespace ddpctl

namespace ddpctl {

std::map<std::string, PreemptionSeen> preemption_seen(const std::vector<ReportRow>& rows) {
  std::map<std::string, PreemptionSeen> by;
  for (const auto& r : rows) {
    if (!r.wall_s && r.requeue_ran_s <= 0) continue;
    PreemptionSeen& s = by[r.partition];
    ++s.runs;
    s.preemptions += r.preemptions;
    s.requeues += static_cast<int>(r.requeues.size());
    s.ran_s += r.wall_s.value_or(0) + r.requeue_ran_s;
    s.lost_s += r.requeue_lost_s;
  }
  return by;
}

double expected_preemption_s(const PreemptionSeen* seen, const std::string& partition, double run_time_s,
                             std::string& note) {
  if (!seen || seen->ran_s <= 0) {
    note = fmt::format("preemptible: no earlier run on {} to expect preemptions from, counted as none", partition);
    return 0;
  }
  if (seen->preemptions == 0) {
    note = fmt::format("preemptible: no preemption in {} of {} earlier run(s) on {}", format_duration(seen->ran_s),
                       seen->runs, partition);
    return 0;
  }
  const double expected = seen->preemptions / seen->ran_s * run_time_s;
  const double each = seen->requeues > 0 ? seen->lost_s / seen->requeues : 0;
  const double extra = expected * each;
  note = fmt::format("preemptible: +{} for {:.1f} expected preemption(s) at {} each, seen in {} earlier run(s) on {}",
                     format_duration(extra), expected, format_duration(each), seen->runs, partition);
  return extra;
}

}  // namespace ddpctl
