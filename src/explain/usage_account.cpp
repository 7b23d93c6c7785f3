#include "explain/usage_account.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fstream>

#include "base/files.hpp"
#include "base/text.hpp"
#include "runs/fabric_record.hpp"
#include "runs/in_job_record.hpp"
#include "runs/node_check_record.hpp"
#include "runs/stall_record.hpp"

namespace ddpctl {

namespace {

struct PartKind {
  const char* key;
  const char* words;
};
// The order an attempt spends its time in, and the idle nodes beside it.
constexpr PartKind kParts[] = {
    {"training", "training"},
    {"checks", "node and fabric checks"},
    {"start", "start: processes, rendezvous, first step"},
    {"restarts", "in-job restarts"},
    {"stalled", "stalled"},
    {"interrupted", "interrupted attempts after their last epoch (redone unless a checkpoint kept it)"},
    {"after", "after the last epoch"},
    {"unsplit", "running (no metrics to split it)"},
    {"idle", "idle spares and nodes left out"},
};

AccountPart& part(std::vector<AccountPart>& parts, const std::string& key) {
  for (auto& p : parts)
    if (p.key == key) return p;
  throw std::logic_error("no account part " + key);
}

// `seconds` of `nodes` of the attempt's `a.alloc_nodes` nodes into `p`.
void add(AccountPart& p, const AttemptFacts& a, double seconds, int nodes) {
  if (seconds <= 0 || nodes <= 0) return;
  double share = static_cast<double>(nodes) / std::max(1, a.alloc_nodes);
  p.seconds += seconds;
  p.node_s += seconds * nodes;
  p.cpu_s += seconds * a.cpus * share;
  p.gpu_s += seconds * a.gpus * share;
}

}  // namespace

double UsageAccount::share(const std::string& key) const {
  for (const auto& p : parts)
    if (p.key == key) return node_s > 0 ? p.node_s / node_s : 0;
  return 0;
}

UsageAccount account_usage(const std::vector<AttemptFacts>& attempts, int step_nodes) {
  UsageAccount a;
  for (const auto& k : kParts) a.parts.push_back({k.key, k.words});
  bool energy_everywhere = !attempts.empty();
  double energy_j = 0;
  for (size_t i = 0; i < attempts.size(); ++i) {
    const AttemptFacts& x = attempts[i];
    bool last = i + 1 == attempts.size();
    double elapsed = std::max(0.0, static_cast<double>(x.end - x.start));
    int n = std::min(std::max(1, step_nodes), std::max(1, x.alloc_nodes));
    ++a.attempts;
    a.elapsed_s += elapsed;
    a.node_s += elapsed * x.alloc_nodes;
    a.cpu_s += elapsed * x.cpus;
    if (x.cpus <= 0) a.cpus_known = false;  // an attempt as squeue said it: no CPU count
    a.gpu_s += elapsed * x.gpus;
    if (x.energy_j) energy_j += *x.energy_j;
    else energy_everywhere = false;
    // The step's nodes' time, part after part, each within what is left.
    double left = elapsed;
    auto take = [&](const char* key, double s) {
      s = std::clamp(s, 0.0, left);
      left -= s;
      add(part(a.parts, key), x, s, n);
    };
    take("checks", x.checks_s);
    if (x.first_step && x.last_epoch_end) {
      double first = std::max(*x.first_step, static_cast<double>(x.start));
      take("start", first - static_cast<double>(x.start) - x.checks_s);
      double span = std::min(*x.last_epoch_end - first, left);
      take("restarts", std::min(x.in_job_lost_s, std::max(0.0, span)));
      take("training", span - std::min(x.in_job_lost_s, std::max(0.0, span)));
      take("stalled", x.stalled_s);
      take(last ? "after" : "interrupted", left);
    } else if (x.metrics_anywhere && !last) {
      take("restarts", x.in_job_lost_s);
      take("interrupted", left);  // requeued before its first epoch ended
    } else {
      take("stalled", x.stalled_s);
      take("unsplit", left);
    }
    add(part(a.parts, "idle"), x, elapsed, x.alloc_nodes - n);
  }
  a.parts.erase(std::remove_if(a.parts.begin(), a.parts.end(), [](const AccountPart& p) { return p.node_s <= 0; }),
                a.parts.end());
  if (energy_everywhere && energy_j > 0) a.energy_kwh = energy_j / 3.6e6;
  else a.energy_note = "not recorded by this site (sacct's ConsumedEnergyRaw is empty or 0: no AcctGatherEnergyType)";
  return a;
}

namespace {

// The slowest node's check of `attempt` on `nodes`, and its fabric check.
double checks_of(const std::string& log_base, int attempt, const std::vector<std::string>& nodes) {
  double slowest = 0;
  for (const auto& n : nodes) {
    try {
      if (auto r = parse_node_check(read_file(node_check_path(log_base, attempt, n), 1 << 16)))
        slowest = std::max(slowest, r->seconds);
    } catch (const std::exception&) {
    }
  }
  if (auto f = read_fabric_record(log_base, attempt)) slowest += f->seconds;
  return slowest;
}

struct MetricLine {
  double time = 0;
  std::optional<double> first_step;
};

std::vector<MetricLine> metric_lines(const std::string& path) {
  std::vector<MetricLine> lines;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("time") || !j["time"].is_number()) continue;
    MetricLine m;
    m.time = j["time"].get<double>();
    if (j.contains("first_step_unix") && j["first_step_unix"].is_number() && j["first_step_unix"].get<double>() > 0)
      m.first_step = j["first_step_unix"].get<double>();
    else if (j.contains("epoch_s") && j["epoch_s"].is_number())
      m.first_step = m.time - j["epoch_s"].get<double>();
    lines.push_back(m);
  }
  return lines;
}

}  // namespace

std::vector<AttemptFacts> attempt_facts(const std::string& log_base, const std::string& metrics_path,
                                        const std::vector<Job>& attempts) {
  std::vector<MetricLine> lines = metrics_path.empty() ? std::vector<MetricLine>{} : metric_lines(metrics_path);
  InJobHistory in_job = read_in_job_history(log_base);
  std::optional<StallRecord> stall = read_stall_record(log_base);
  std::vector<AttemptFacts> out;
  for (size_t i = 0; i < attempts.size(); ++i) {
    const Job& j = attempts[i];
    if (!j.start_time || !j.end_time || *j.end_time < *j.start_time) continue;
    AttemptFacts f;
    f.attempt = static_cast<int>(i);
    f.start = *j.start_time;
    f.end = *j.end_time;
    f.alloc_nodes = std::max(1, j.node_count);
    f.cpus = j.cpus;
    f.gpus = j.gpus;
    f.energy_j = j.energy_j;
    f.checks_s = checks_of(log_base, f.attempt, expand_hostlist(j.nodes));
    f.metrics_anywhere = !lines.empty();
    // A line's time is whole seconds: one second of slack at the end.
    for (const auto& m : lines) {
      if (m.time < static_cast<double>(f.start) || m.time > static_cast<double>(f.end) + 1) continue;
      f.last_epoch_end = std::min(std::max(f.last_epoch_end.value_or(0), m.time), static_cast<double>(f.end));
      if (m.first_step) f.first_step = std::min(f.first_step.value_or(*m.first_step), *m.first_step);
    }
    if (auto it = in_job.lost_by_attempt.find(f.attempt); it != in_job.lost_by_attempt.end()) f.in_job_lost_s = it->second;
    if (stall && stall->attempt == f.attempt && stall->stalled && stall->taken != WatchdogOutcome::Restarted)
      f.stalled_s = stall->for_s;
    out.push_back(f);
  }
  return out;
}

void add_usage_notes(UsageAccount& a, const UsageSeen& s) {
  if (s.gpu_util_mean && *s.gpu_util_mean < 60)
    a.notes.push_back(fmt::format("GPUs idle {:.0f}% of the time (mean utilisation {:.0f}%): the input pipeline, "
                                  "the host or communication keeps them waiting",
                                  100 - *s.gpu_util_mean, *s.gpu_util_mean));
  if (s.rss_peak_bytes && s.mem_asked_mib > 0) {
    double pct = 100.0 * static_cast<double>(*s.rss_peak_bytes) / (static_cast<double>(s.mem_asked_mib) * 1048576.0);
    if (pct < 25)
      a.notes.push_back(fmt::format("memory peak {:.0f}% of what was asked ({} of {}): ask for less and the job "
                                    "fits more nodes",
                                    pct, format_bytes(*s.rss_peak_bytes), format_bytes(s.mem_asked_mib * 1048576)));
  }
  if (s.cpu_pct_mean && s.cpus > 0 && *s.cpu_pct_mean < 25.0 * s.cpus)
    a.notes.push_back(fmt::format("CPUs {:.0f}% busy on average ({:.0f}% of {} CPUs' 100% each)",
                                  *s.cpu_pct_mean / s.cpus, *s.cpu_pct_mean, s.cpus));
  double idle = a.share("idle");
  if (idle >= 0.1)
    a.notes.push_back(fmt::format("{:.0f}% of the node-hours went to spares and nodes left out, idle beside the step",
                                  100 * idle));
}

std::string describe_account(const UsageAccount& a) {
  std::vector<std::string> parts;
  for (const auto& p : a.parts) parts.push_back(fmt::format("{:.0f}% {}", 100 * p.node_s / std::max(1e-9, a.node_s), p.words));
  std::string text = fmt::format("{:.3f} node-h", a.node_s / 3600);
  if (a.gpu_s > 0) text += fmt::format(", {:.3f} GPU-h", a.gpu_s / 3600);
  if (a.cpus_known && a.cpu_s > 0) text += fmt::format(", {:.3f} CPU-h", a.cpu_s / 3600);
  text += fmt::format(" over {} attempt(s): {}", a.attempts, join(parts, ", "));
  text += a.energy_kwh ? fmt::format("; {:.3f} kWh", *a.energy_kwh) : "; energy " + a.energy_note;
  for (const auto& n : a.notes) text += "; " + n;
  return text;
}

std::string describe_ranks(const UsageAccount& a) {
  if (a.ranks.empty()) return "";
  const RankAccount& r0 = a.ranks.front();
  std::string unit = r0.gpu_s > 0 ? fmt::format("{:.3f} GPU-h", r0.gpu_s / 3600) : fmt::format("{:.3f} node-h", r0.node_s / 3600);
  std::string text = fmt::format("per rank: {} each, {:.0f}% of it training", unit,
                                 100 * r0.training_s / std::max(1e-9, r0.held_s));
  std::vector<std::string> busy;
  for (const auto& r : a.ranks) {
    if (busy.size() == 16) {
      busy.push_back(fmt::format("… ({} more in the JSON)", a.ranks.size() - 16));
      break;
    }
    busy.push_back(fmt::format("{} {} {}", r.rank, r.node.empty() ? "-" : r.node,
                               r.busy_pct ? fmt::format("{:.0f}%", *r.busy_pct) : "-"));
  }
  return text + fmt::format("; busy ({}): {}", r0.gpu_s > 0 ? "its GPU" : "its CPUs", join(busy, ", "));
}

nlohmann::json account_json(const UsageAccount& a) {
  nlohmann::json ranks = nlohmann::json::array();
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  for (const auto& r : a.ranks)
    ranks.push_back({{"rank", r.rank}, {"node", r.node.empty() ? nlohmann::json() : nlohmann::json(r.node)},
                     {"held_s", r.held_s}, {"training_s", r.training_s}, {"node_h", r.node_s / 3600},
                     {"cpu_h", a.cpus_known ? nlohmann::json(r.cpu_s / 3600) : nlohmann::json()},
                     {"gpu_h", r.gpu_s / 3600}, {"busy_pct", opt(r.busy_pct)}, {"cpu_wait_pct", opt(r.cpu_wait_pct)},
                     {"rss_peak_bytes", r.rss_peak_bytes}, {"mem_peak_mib", opt(r.mem_peak_mib)}});
  nlohmann::json parts = nlohmann::json::array();
  for (const auto& p : a.parts)
    parts.push_back({{"key", p.key}, {"words", p.words}, {"seconds", p.seconds}, {"node_h", p.node_s / 3600},
                     {"cpu_h", a.cpus_known ? nlohmann::json(p.cpu_s / 3600) : nlohmann::json()},
                     {"gpu_h", p.gpu_s / 3600}});
  return {{"attempts", a.attempts}, {"elapsed_s", a.elapsed_s}, {"node_h", a.node_s / 3600},
          {"cpu_h", a.cpus_known ? nlohmann::json(a.cpu_s / 3600) : nlohmann::json()}, {"gpu_h", a.gpu_s / 3600},
          {"parts", parts},
          {"energy_kwh", a.energy_kwh ? nlohmann::json(*a.energy_kwh) : nlohmann::json()},
          {"energy_note", a.energy_note.empty() ? nlohmann::json() : nlohmann::json(a.energy_note)},
          {"notes", a.notes},
          {"mfu", a.mfu ? nlohmann::json(*a.mfu) : nlohmann::json()},
          {"mfu_words", a.mfu_words.empty() ? nlohmann::json() : nlohmann::json(a.mfu_words)},
          {"ranks", ranks}};
}

}  // namespace ddpctl
