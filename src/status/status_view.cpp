#include "status/status_view.hpp"

#include <stdexcept>

namespace ddpctl {

namespace {

// A row as the index keeps it: its cells, and its JSON as text, read only
// for --json.
nlohmann::json row_view(const StatusRow& r) {
  nlohmann::json j = r.json;
  // Its jobs' ends are in the ledger from now on.
  if (auto src = j.find("source"); src != j.end()) *src = "ledger";
  return {{"run", r.run},   {"job", r.job},   {"shape", r.shape}, {"state", r.state}, {"tone", static_cast<int>(r.tone)},
          {"info", r.info}, {"time", r.time}, {"nodes", r.nodes}, {"gpus", r.gpus},   {"json", j.dump()}};
}

StatusRow row_from_view(const nlohmann::json& v, bool with_json) {
  StatusRow r;
  r.run = v.at("run").get<std::string>();
  r.job = v.at("job").get<std::string>();
  r.shape = v.at("shape").get<std::string>();
  r.state = v.at("state").get<std::string>();
  int tone = v.at("tone").get<int>();
  if (tone < static_cast<int>(Tone::Plain) || tone > static_cast<int>(Tone::Bad)) throw std::out_of_range("tone");
  r.tone = static_cast<Tone>(tone);
  r.info = v.at("info").get<std::string>();
  r.time = v.at("time").get<std::string>();
  r.nodes = v.at("nodes").get<std::string>();
  r.gpus = v.at("gpus").get<std::string>();
  const std::string& text = v.at("json").get_ref<const std::string&>();
  if (with_json) r.json = nlohmann::json::parse(text);
  return r;
}

}  // namespace

std::string run_view(const RunRows& g) {
  nlohmann::json rows = nlohmann::json::array(), attempts = nlohmann::json::array();
  for (const auto& r : g.rows) rows.push_back(row_view(r));
  for (const auto& [r, all_only] : g.attempts) attempts.push_back({{"row", row_view(r)}, {"all_only", all_only}});
  return nlohmann::json({{"rows", rows}, {"attempts", attempts}}).dump();
}

RunRows rows_from_view(const IndexedRun& ix, bool with_json) {
  nlohmann::json v = nlohmann::json::parse(ix.view);
  RunRows g{ix.created_at, ix.id, {}, {}};
  for (const auto& r : v.at("rows")) g.rows.push_back(row_from_view(r, with_json));
  for (const auto& a : v.at("attempts"))
    g.attempts.emplace_back(row_from_view(a.at("row"), with_json), a.at("all_only").get<bool>());
  return g;
}

}  // namespace ddpctl
