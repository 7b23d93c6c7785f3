#include "agent/job_events.hpp"

#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <optional>
#include <set>
#include <iostream>
#include <sys/stat.h>

#include "base/diagnostics.hpp"
#include "base/files.hpp"
#include "base/text.hpp"
#include "runs/job_states.hpp"

namespace ddpctl {

namespace {

long long size_of(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<long long>(st.st_size) : 0;
}

// A metrics line as an event carries at most this much of it.
constexpr long long kMaxMetricLine = 16 << 10;

bool write_event(const JobEventSource& s, const std::string& once_key, EventType type,
                        const nlohmann::json& fields) {
  if (s.run_dir.empty()) return false;
  nlohmann::json all = s.keys;
  if (fields.is_object())
    for (auto it = fields.begin(); it != fields.end(); ++it) all[it.key()] = it.value();
  try {
    if (once_key.empty()) append_event(s.run_dir, type, all);
    else append_event_once(s.run_dir, once_key, type, all);
    return true;
  } catch (const std::exception& e) {
    std::cerr << "ddpctl: warning: the run's " << event_type_name(type) << " event was not written: " << e.what()
              << '\n';
    return false;
  }
}

}  // namespace

JobEventSource job_event_source(const Environment& env) {
  JobEventSource s;
  s.run_dir = env.value("DDPCTL_RUN_DIR");
  std::string job = env.value("SLURM_JOB_ID");
  if (std::string array = env.value("SLURM_ARRAY_JOB_ID"), task = env.value("SLURM_ARRAY_TASK_ID");
      !array.empty() && !task.empty())
    job = array + "_" + task;
  if (!job.empty()) s.keys["job"] = job;
  const std::string attempt = env.value("SLURM_RESTART_COUNT", "0");
  if (attempt.find_first_not_of("0123456789") == std::string::npos && attempt.size() < 9)
    s.keys["attempt"] = std::stoi(attempt);
  s.keys["node"] = env.value("SLURMD_NODENAME", env.hostname());
  if (std::string cell = env.value("DDPCTL_CELL"); !cell.empty()) s.keys["cell"] = cell;
  return s;
}

bool job_event(const JobEventSource& s, EventType type, const nlohmann::json& fields) {
  return write_event(s, "", type, fields);
}

bool job_event_once(const JobEventSource& s, const std::string& once_key, EventType type,
                    const nlohmann::json& fields) {
  return write_event(s, once_key, type, fields);
}

std::string preempted_once_key(const JobEventSource& s) {
  return fmt::format("preempted.{}.{}", s.keys.value("job", ""), s.keys.value("attempt", 0));
}

void job_event_from_words(const Environment& env, const std::string& type, const std::vector<std::string>& words) {
  std::optional<EventType> t = parse_event_type(type);
  if (!t) throw UserError(Location{"TYPE"}, "", fmt::format("{}: no such event type (docs/json.md \"Events\")", printable(type)));
  static const std::set<std::string> kReserved = {"schema", "seq", "time", "t", "type", "run", "cursor"};
  static const std::set<std::string> kLists = {"nodes", "taken"};
  static const std::set<std::string> kIntegers = {"generation", "restart", "step", "rank"};
  nlohmann::json fields = nlohmann::json::object();
  for (const auto& w : words) {
    const size_t eq = w.find('=');
    const std::string key = w.substr(0, eq);
    if (eq == std::string::npos || key.empty() || key.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") != std::string::npos ||
        kReserved.count(key))
      throw UserError(Location{"KEY=VALUE"}, "",
                      fmt::format("{}: expected KEY=VALUE with a KEY of a-z and _ (not schema, seq, time, t, type, run "
                                  "or cursor)",
                                  printable(w)));
    const std::string value = w.substr(eq + 1);
    if (kLists.count(key)) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& part : split_ws([&] { std::string v = value; std::replace(v.begin(), v.end(), ',', ' '); return v; }())) list.push_back(part);
      fields[key] = list;
    } else if (kIntegers.count(key)) {
      if (value.empty() || value.size() > 15 || value.find_first_not_of("0123456789") != std::string::npos)
        throw UserError(Location{key}, "", fmt::format("{}: not a whole number", printable(value)));
      fields[key] = std::stoll(value);
    } else {
      fields[key] = value;
    }
  }
  JobEventSource s = job_event_source(env);
  if (s.run_dir.empty()) return;  // not a run of ddpctl's
  nlohmann::json all = s.keys;
  for (auto it = fields.begin(); it != fields.end(); ++it) all[it.key()] = it.value();
  // A preemption is seen by the script and the sampler both: said once.
  if (*t == EventType::Preempted)
    append_event_once(s.run_dir, preempted_once_key(s), *t, all);
  else
    append_event(s.run_dir, *t, all);
}

TrainingEvents::TrainingEvents(JobEventSource source, TrainingFiles files, double progress_every_s)
    : source_(std::move(source)),
      files_(std::move(files)),
      every_s_(progress_every_s),
      metrics_offset_(files_.metrics_from >= 0 ? files_.metrics_from : size_of(files_.metrics)),
      step_log_offset_(size_of(files_.step_log)) {}

void TrainingEvents::tick(double now) {
  if (source_.run_dir.empty()) return;
  metrics();
  resumed();
  progress(now);
}

void TrainingEvents::metrics() {
  const long long size = size_of(files_.metrics);
  if (size < metrics_offset_) metrics_offset_ = 0;  // the file was started again
  if (size == metrics_offset_) return;
  std::ifstream in(files_.metrics, std::ios::binary);
  in.seekg(metrics_offset_);
  std::string chunk(static_cast<size_t>(std::min(size - metrics_offset_, 1LL << 20)), '\0');
  in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
  chunk.resize(static_cast<size_t>(in.gcount()));
  size_t at = 0;
  for (size_t nl; (nl = chunk.find('\n', at)) != std::string::npos; at = nl + 1) {
    const std::string line = chunk.substr(at, nl - at);
    if (static_cast<long long>(line.size()) > kMaxMetricLine) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object()) job_event(source_, EventType::Metric, {{"metrics", j}});
  }
  // A line longer than a whole read is no metrics line: passed over.
  if (at == 0 && chunk.size() >= (1u << 20)) at = chunk.size();
  metrics_offset_ += static_cast<long long>(at);
}

void TrainingEvents::progress(double now) {
  if (now < next_progress_) return;
  std::optional<Progress> p = read_progress(files_.progress);
  if (!p || (p->step == last_step_ && p->epoch == last_epoch_)) return;
  last_step_ = p->step, last_epoch_ = p->epoch;
  next_progress_ = now + every_s_;
  nlohmann::json j = {{"epoch", p->epoch}, {"step", p->step}};
  if (p->epochs) j["epochs"] = p->epochs;
  if (p->steps) j["steps"] = p->steps;
  if (p->loss) j["loss"] = *p->loss;
  if (p->samples_per_s > 0) j["samples_per_s"] = p->samples_per_s;
  if (!p->phase.empty()) j["phase"] = p->phase;
  job_event(source_, EventType::Progress, j);
}

void TrainingEvents::resumed() {
  // The trainer says which checkpoint it resumed before it trains, at any
  // time after the sampler started: looked for in what the step log gained
  // since the last look, until found or kResumeLookBytes of it were read.
  if (resume_looked_ || files_.step_log.empty()) return;
  const long long size = size_of(files_.step_log);
  if (size < step_log_offset_) step_log_offset_ = 0;  // the file was started again
  if (size <= step_log_offset_) return;
  std::ifstream in(files_.step_log, std::ios::binary);
  in.seekg(step_log_offset_);
  std::string chunk(static_cast<size_t>(std::min(size - step_log_offset_, 64LL << 10)), '\0');
  in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
  chunk.resize(static_cast<size_t>(in.gcount()));
  // "ddp-train: resumed from <path> at epoch 2, sample 0 of 1600 (written by 2 ranks, now 2); global batch ..."
  constexpr std::string_view kResumed = "ddp-train: resumed from ";
  size_t at = 0;
  for (size_t nl; (nl = chunk.find('\n', at)) != std::string::npos; at = nl + 1) {
    const std::string l = chunk.substr(at, nl - at);
    if (l.rfind(kResumed, 0) != 0) continue;
    const std::string what = plain_line(l.substr(kResumed.size(), l.find("; global batch") - kResumed.size()), 400);
    nlohmann::json j = {{"from", what}};
    if (size_t e = what.rfind(" at epoch "); e != std::string::npos) {
      j["checkpoint"] = what.substr(0, e);
      j["epoch"] = std::atoi(what.c_str() + e + 10);
    }
    job_event_once(source_, "resumed." + files_.once, EventType::Resumed, j);
    resume_looked_ = true;
    return;
  }
  if (at == 0 && chunk.size() >= (64u << 10)) at = chunk.size();  // a line longer than a read: no trainer's
  step_log_offset_ += static_cast<long long>(at);
  resume_read_ += static_cast<long long>(at);
  if (resume_read_ >= kResumeLookBytes) resume_looked_ = true;
}

}  // namespace ddpctl
