#include "runs/slow_record.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "base/files.hpp"
#include "base/json_fields.hpp"
#include "base/text.hpp"
#include "runs/job_files.hpp"
#include "runs/stall_record.hpp"

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

std::vector<std::string> recorded_slow_nodes(const std::string& log_base, int attempt, std::string* why) {
  auto r = read_slow_record(log_base);
  if (!r || r->attempt != attempt || !r->exclude || r->exclude_nodes.empty()) return {};
  if (why) *why = describe_slow(*r, r->updated);
  return r->exclude_nodes;
}

}  // namespace ddpctl
