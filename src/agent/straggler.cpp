// Stragglers (straggler.hpp): relative speeds from each rank's work, the
// decision over a run of readings, the record, and the watchdog's monitor.
#include "agent/straggler.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <iostream>
#include <set>
#include <sys/stat.h>

#include "base/files.hpp"
#include "runs/job_files.hpp"
#include "base/json_fields.hpp"
#include "base/text.hpp"
#include "agent/watchdog.hpp"

namespace ddpctl {

std::string speed_basis_name(SpeedBasis b) { return b == SpeedBasis::TrainerWork ? "trainer" : "cpu"; }

std::string speed_basis_text(SpeedBasis b) {
  return b == SpeedBasis::TrainerWork ? "the trainer's loading and forward time per batch"
                                      : "CPU time used or waited for";
}

std::optional<SpeedBasis> parse_speed_basis(const std::string& s) {
  if (s == "trainer") return SpeedBasis::TrainerWork;
  if (s == "cpu") return SpeedBasis::CpuDemand;
  return std::nullopt;
}

namespace {

std::string rank_name(const RankId& id) { return describe_tasks({StoppedTask{id.task, id.rank, id.node}}); }

}  // namespace

std::optional<std::vector<RankWork>> WorkWindow::push(double now, const std::vector<RankCounter>& counters) {
  std::map<int, RankCounter> current;
  for (const auto& c : counters) current[c.id.key()] = c;
  if (!history_.empty()) {
    for (const auto& [key, before] : history_.back().second) {
      auto it = current.find(key);
      if (it != current.end() && (it->second.work_s < before.work_s - 1e-9 || it->second.wall_s < before.wall_s - 1e-9)) {
        history_.clear();
        break;
      }
    }
  }
  history_.emplace_back(now, std::move(current));
  // The newest counters at least a window old; older ones are needed no more.
  size_t base = history_.size();
  for (size_t i = history_.size() - 1; i-- > 0;)
    if (history_[i].first <= now - window_) {
      base = i;
      break;
    }
  if (base == history_.size()) return std::nullopt;
  history_.erase(history_.begin(), history_.begin() + static_cast<long>(base));
  std::vector<RankWork> out;
  const auto& then = history_.front().second;
  for (const auto& [key, c] : history_.back().second) {
    auto it = then.find(key);
    if (it == then.end()) continue;
    double span = c.wall_s - it->second.wall_s;
    if (span <= 0) continue;
    out.push_back({c.id, c.work_s - it->second.work_s, span});
  }
  return out;
}

std::vector<RankSpeed> relative_speeds(const std::vector<RankWork>& work) {
  std::vector<RankSpeed> out;
  for (const auto& w : work)
    if (w.span_s > 0 && w.work_s > 0) out.push_back({w.id, 1, w.work_s / w.span_s});
  if (out.size() < 2) return {};
  double least = std::min_element(out.begin(), out.end(), [](const RankSpeed& a, const RankSpeed& b) {
                   return a.busy < b.busy;
                 })->busy;
  for (auto& s : out) s.speed = least / s.busy;
  return out;
}

void StragglerWatch::reset() { runs_.clear(); }

StragglerVerdict StragglerWatch::observe(double now, SpeedBasis basis, const std::vector<RankWork>& work) {
  StragglerVerdict v;
  v.speeds = relative_speeds(work);
  if (v.speeds.empty()) return v;  // no reading: nothing changes
  std::vector<const RankSpeed*> below;
  for (const auto& s : v.speeds)
    // A rank mostly idle by its CPU keeps nobody waiting, however it compares.
    if (s.speed < kSlowBelow && (basis != SpeedBasis::CpuDemand || s.busy >= 0.5)) below.push_back(&s);
  if (!below.empty() && 2 * below.size() > v.speeds.size()) {
    v.none_because = fmt::format("{} of {} ranks are below {:.1f}× the fastest: the fastest are the odd ones out",
                                 below.size(), v.speeds.size(), kSlowBelow);
    below.clear();
  }
  std::set<int> keys;
  for (const auto* s : below) keys.insert(s->id.key());
  for (auto it = runs_.begin(); it != runs_.end();) {
    if (keys.count(it->first)) {
      ++it;
      continue;
    }
    if (it->second.named) {
      const Run& r = it->second;
      recovered_.push_back({r.id, r.speed_sum / r.readings, r.since, now});
      v.changed = true;
    }
    it = runs_.erase(it);
  }
  for (const auto* s : below) {
    auto [it, fresh] = runs_.try_emplace(s->id.key());
    Run& r = it->second;
    if (fresh) r.since = now;
    r.id = s->id;
    r.speed_sum += s->speed;
    r.readings++;
    if (!r.named && now - r.since >= slow_after_) r.named = v.changed = true;
  }
  for (const auto& [key, r] : runs_)
    if (r.named) v.named.push_back({r.id, r.speed_sum / r.readings, r.since, std::nullopt});
  return v;
}

std::optional<std::vector<double>> progress_rank_work(const std::string& progress_json) {
  nlohmann::json j = nlohmann::json::parse(progress_json, nullptr, false);
  if (!j.is_object() || !j.contains("rank_work_s") || !j["rank_work_s"].is_array()) return std::nullopt;
  std::vector<double> out;
  for (const auto& v : j["rank_work_s"]) {
    if (!v.is_number()) return std::nullopt;
    out.push_back(v.get<double>());
  }
  if (out.empty()) return std::nullopt;
  return out;
}

std::vector<RankCounter> SampleWork::add(const std::map<std::string, std::vector<UsageSample>>& samples) {
  for (const auto& [node, list] : samples) {
    double& last = last_t_[node];
    for (const auto& s : list) {
      if (s.t <= last) continue;
      last = s.t;
      if (s.interval_s <= 0) continue;
      for (const auto& r : s.ranks) {
        if (!r.cpu_pct || (!r.rank && !r.task)) continue;
        RankCounter& c = counters_[{node, r.rank ? *r.rank : -1 - *r.task}];
        c.id = {r.task.value_or(r.rank.value_or(0)), r.rank, node};
        c.work_s += (*r.cpu_pct + r.wait_pct.value_or(0)) / 100 * s.interval_s;
        c.wall_s += s.interval_s;
      }
    }
  }
  bool ranked = std::any_of(counters_.begin(), counters_.end(), [](const auto& c) { return c.second.id.rank.has_value(); });
  std::vector<RankCounter> out;
  for (const auto& [key, c] : counters_)
    if (c.id.rank.has_value() == ranked) out.push_back(c);
  return out;
}

namespace {

nlohmann::json id_json(const RankId& id) {
  return {{"task", id.task}, {"rank", id.rank ? nlohmann::json(*id.rank) : nlohmann::json()}, {"node", id.node}};
}

RankId read_id(const nlohmann::json& j) {
  RankId id;
  id.task = static_cast<int>(json_field::integer(j, "task").value_or(0));
  if (auto r = json_field::integer(j, "rank")) id.rank = static_cast<int>(*r);
  id.node = json_field::string(j, "node").value_or("");
  return id;
}

double round2(double v) { return std::round(v * 100) / 100; }

nlohmann::json slow_json(const std::vector<SlowRank>& list) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : list) {
    nlohmann::json j = id_json(s.id);
    j["speed"] = round2(s.speed);
    j["since"] = s.since;
    j["until"] = s.until ? nlohmann::json(*s.until) : nlohmann::json();
    out.push_back(j);
  }
  return out;
}

std::vector<SlowRank> read_slow(const nlohmann::json& j, const char* key) {
  std::vector<SlowRank> out;
  if (!j.contains(key) || !j[key].is_array()) return out;
  for (const auto& s : j[key]) {
    if (!s.is_object()) continue;
    SlowRank r;
    r.id = read_id(s);
    r.speed = json_field::number(s, "speed").value_or(1);
    r.since = json_field::number(s, "since").value_or(0);
    r.until = json_field::number(s, "until");
    out.push_back(r);
  }
  return out;
}

std::string basis_words(const std::string& basis) {
  auto b = parse_speed_basis(basis);
  return b ? " (by " + speed_basis_text(*b) + ")" : "";
}

}  // namespace

nlohmann::json slow_record_json(const SlowRecord& r) {
  nlohmann::json speeds = nlohmann::json::array();
  for (const auto& s : r.speeds) {
    nlohmann::json j = id_json(s.id);
    j["speed"] = round2(s.speed);
    j["busy"] = round2(s.busy);
    speeds.push_back(j);
  }
  return {{"attempt", r.attempt},       {"basis", r.basis},       {"below", kSlowBelow},
          {"slow_after_s", r.slow_after_s}, {"updated", r.updated}, {"speeds", speeds},
          {"slow", slow_json(r.slow)},  {"recovered", slow_json(r.recovered)},
          {"exclude", r.exclude},       {"exclude_nodes", r.exclude_nodes}, {"exclude_note", r.exclude_note}};
}

std::optional<SlowRecord> read_slow_record(const std::string& log_base) try {
  std::string text;
  try {
    text = read_file(job_files::slow(log_base), 4 << 20);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  SlowRecord r;
  r.attempt = static_cast<int>(json_field::integer(j, "attempt").value_or(0));
  r.basis = json_field::string(j, "basis").value_or("");
  r.slow_after_s = json_field::number(j, "slow_after_s").value_or(0);
  r.updated = json_field::number(j, "updated").value_or(0);
  if (j.contains("speeds") && j["speeds"].is_array())
    for (const auto& s : j["speeds"])
      if (s.is_object())
        r.speeds.push_back({read_id(s), json_field::number(s, "speed").value_or(1), json_field::number(s, "busy").value_or(0)});
  r.slow = read_slow(j, "slow");
  r.recovered = read_slow(j, "recovered");
  r.exclude = j.value("exclude", false);
  if (j.contains("exclude_nodes") && j["exclude_nodes"].is_array())
    for (const auto& n : j["exclude_nodes"])
      if (n.is_string()) r.exclude_nodes.push_back(n.get<std::string>());
  r.exclude_note = json_field::string(j, "exclude_note").value_or("");
  return r;
} catch (const std::exception&) {
  return std::nullopt;
}

std::string describe_slow(const SlowRecord& r, double now) {
  if (r.slow.empty()) return "";
  std::vector<std::string> parts;
  for (const auto& s : r.slow)
    parts.push_back(fmt::format("{} at {:.2f}× the others for {}", rank_name(s.id), s.speed,
                                format_duration(std::max(0.0, now - s.since))));
  std::string out = join(parts, ", ") + basis_words(r.basis);
  if (r.exclude && !r.exclude_nodes.empty())
    out += fmt::format("; a requeue leaves out {}", join(r.exclude_nodes, ", "));
  else if (r.exclude && !r.exclude_note.empty())
    out += "; " + r.exclude_note;
  return out;
}

std::string describe_slow_history(const SlowRecord& r) {
  std::vector<std::string> parts;
  for (const auto& s : r.slow)
    parts.push_back(fmt::format("{} at {:.2f}× the others for {}", rank_name(s.id), s.speed,
                                format_duration(std::max(0.0, r.updated - s.since))));
  for (const auto& s : r.recovered)
    parts.push_back(fmt::format("{} was at {:.2f}× the others for {}", rank_name(s.id), s.speed,
                                format_duration(std::max(0.0, s.until.value_or(s.since) - s.since))));
  if (parts.empty()) return "";
  return join(parts, ", ") + basis_words(r.basis);
}

std::vector<std::string> slow_nodes_to_exclude(const std::vector<SlowRank>& named, const std::vector<std::string>& nodes,
                                               std::string* note) {
  std::vector<std::string> out;
  for (const auto& n : nodes)
    if (std::any_of(named.begin(), named.end(), [&](const SlowRank& s) { return s.id.node == n; })) out.push_back(n);
  if (!out.empty() && out.size() == nodes.size()) {
    if (note)
      *note = nodes.size() == 1 ? "its only node is not excluded"
                                : "every node has a slow rank: the ranks, not the nodes, are slower; none is excluded";
    return {};
  }
  return out;
}

double straggler_window(double slow_after_s, double interval_s) {
  return std::max({slow_after_s / 5, 4 * interval_s, 10.0});
}

StragglerMonitor::StragglerMonitor(StragglerOptions o, double started_at)
    : o_(std::move(o)), started_at_(started_at), window_(straggler_window(o_.slow_after_s, o_.interval_s)),
      watch_(o_.slow_after_s) {
  record_.attempt = o_.attempt;
  record_.slow_after_s = o_.slow_after_s;
  record_.exclude = o_.exclude;
}

void StragglerMonitor::save() {
  try {
    write_file_atomic(job_files::slow(o_.log_base), slow_record_json(record_).dump() + "\n");
  } catch (const std::exception& e) {
    std::cerr << "ddpctl: watchdog: error: the slow ranks' record could not be written (" << e.what()
              << "); the watchdog goes on\n";
  }
  saved_at_ = record_.updated;
}

void StragglerMonitor::tick(double now) try {
  std::optional<std::vector<RankWork>> reading;
  auto use = [&](SpeedBasis b) {
    if (basis_ != b) {  // the trainer's own numbers from now on (or, first, the samples')
      window_.clear();
      watch_.reset();
      basis_ = b;
    }
  };
  // The bundled trainer's numbers, once this attempt's progress file has them.
  std::string progress = job_files::progress(o_.log_base);
  struct stat st {};
  if (::stat(progress.c_str(), &st) == 0) {
    double mtime = static_cast<double>(st.st_mtim.tv_sec) + static_cast<double>(st.st_mtim.tv_nsec) / 1e9;
    if (mtime >= started_at_ - 5 && mtime != progress_mtime_) {
      progress_mtime_ = mtime;
      std::optional<std::vector<double>> work;
      try {
        work = progress_rank_work(read_file(progress, 4 << 20));
      } catch (const std::exception&) {
      }
      if (work && work->size() >= 2) {
        use(SpeedBasis::TrainerWork);
        size_t world = work->size(), nodes = std::max<size_t>(1, o_.nodes.size());
        std::vector<RankCounter> counters;
        for (size_t r = 0; r < world; r++) {
          // ddpctl's launch puts the same number of ranks on every node, in order.
          size_t node = std::min(nodes - 1, r * nodes / world);
          RankId id{o_.per_gpu ? static_cast<int>(r) : static_cast<int>(node), static_cast<int>(r),
                    node < o_.nodes.size() ? o_.nodes[node] : ""};
          counters.push_back({id, (*work)[r], mtime});
        }
        reading = window_.push(mtime, counters);
      }
    }
  }
  if (basis_ != SpeedBasis::TrainerWork) {
    std::vector<RankCounter> counters = samples_.add(read_usage(o_.log_base, o_.attempt, 64 << 10));
    if (counters.size() >= 2) {
      use(SpeedBasis::CpuDemand);
      reading = window_.push(now, counters);
    }
  }
  if (!reading || !basis_) return;
  StragglerVerdict v = watch_.observe(now, *basis_, *reading);
  if (v.speeds.empty()) return;
  record_.basis = speed_basis_name(*basis_);
  record_.updated = now;
  record_.speeds = v.speeds;
  record_.slow = v.named;
  record_.recovered = watch_.recovered();
  record_.exclude_note.clear();
  record_.exclude_nodes = slow_nodes_to_exclude(v.named, o_.nodes, &record_.exclude_note);
  if (v.changed) {
    std::string now_slow = describe_slow(record_, now);
    std::cerr << "ddpctl: watchdog: " << (now_slow.empty() ? "no rank is slow any more" : "slow: " + now_slow) << '\n';
  }
  if (v.changed || !have_reading_ || now - saved_at_ >= 60) save();
  have_reading_ = true;
} catch (const std::exception& e) {
  // Never the end of the stall watch: said, and tried again at the next look.
  std::cerr << "ddpctl: watchdog: error: the ranks' speeds could not be read (" << e.what() << ")\n";
}

std::vector<std::string> recorded_slow_nodes(const std::string& log_base, int attempt, std::string* why) {
  auto r = read_slow_record(log_base);
  if (!r || r->attempt != attempt || !r->exclude || r->exclude_nodes.empty()) return {};
  if (why) *why = describe_slow(*r, r->updated);
  return r->exclude_nodes;
}

}  // namespace ddpctl
