#include "runs/fabric_record.hpp"

#include <cmath>

#include "base/files.hpp"
#include "runs/job_files.hpp"

namespace ddpctl {

std::string fabric_level_name(FabricLevel l) {
  switch (l) {
    case FabricLevel::Ok: return "ok";
    case FabricLevel::Warn: return "warn";
    case FabricLevel::Fail: return "fail";
    case FabricLevel::Unmeasured: return "unmeasured";
  }
  return "ok";
}

namespace {

double rounded(double v, double to) { return std::round(v * to) / to; }

}  // namespace

nlohmann::json fabric_record_json(const FabricRecord& r) {
  nlohmann::json measures = nlohmann::json::array();
  for (const auto& m : r.measures)
    measures.push_back({{"round", m.round}, {"nodes", m.nodes},
                        {"busbw_gbs", m.busbw_gbs ? nlohmann::json(*m.busbw_gbs) : nlohmann::json()},
                        {"seconds", m.seconds}});
  nlohmann::json links = nlohmann::json::array();
  for (const auto& [a, b] : r.bad_links) links.push_back({a, b});
  return {{"nodes", r.nodes}, {"expected_gbs", r.expected_gbs}, {"warn_below", r.warn_below},
          {"fail_below", r.fail_below}, {"bytes", r.bytes}, {"level", fabric_level_name(r.level)},
          {"measures", measures}, {"rounds", r.rounds}, {"bad_nodes", r.bad_nodes}, {"bad_links", links},
          {"exclude", r.exclude}, {"text", r.text}, {"problem", r.problem}, {"seconds", rounded(r.seconds, 100)}};
}

std::optional<FabricRecord> parse_fabric_record(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  try {
    FabricRecord r;
    r.nodes = j.value("nodes", std::vector<std::string>{});
    r.expected_gbs = j.value("expected_gbs", 0.0);
    r.warn_below = j.value("warn_below", 0.0);
    r.fail_below = j.value("fail_below", 0.0);
    r.bytes = j.value("bytes", 0LL);
    std::string level = j.value("level", "ok");
    r.level = level == "fail"         ? FabricLevel::Fail
              : level == "warn"       ? FabricLevel::Warn
              : level == "unmeasured" ? FabricLevel::Unmeasured
                                      : FabricLevel::Ok;
    for (const auto& m : j.value("measures", nlohmann::json::array())) {
      FabricTiming x;
      x.round = m.value("round", 1);
      x.nodes = m.value("nodes", std::vector<std::string>{});
      if (m.contains("busbw_gbs") && m["busbw_gbs"].is_number()) x.busbw_gbs = m["busbw_gbs"].get<double>();
      x.seconds = m.value("seconds", 0.0);
      r.measures.push_back(x);
    }
    r.rounds = j.value("rounds", 1);
    r.bad_nodes = j.value("bad_nodes", std::vector<std::string>{});
    for (const auto& l : j.value("bad_links", nlohmann::json::array()))
      if (l.is_array() && l.size() == 2) r.bad_links.emplace_back(l[0].get<std::string>(), l[1].get<std::string>());
    r.exclude = j.value("exclude", std::vector<std::string>{});
    r.text = j.value("text", "");
    r.problem = j.value("problem", "");
    r.seconds = j.value("seconds", 0.0);
    return r;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

std::optional<FabricRecord> read_fabric_record(const std::string& log_base, int attempt) {
  try {
    return parse_fabric_record(read_file(job_files::fabric(log_base, attempt), 1 << 20));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace ddpctl
