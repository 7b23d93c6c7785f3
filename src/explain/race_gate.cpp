#include "explain/race_gate.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "base/files.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

namespace {

std::optional<GateGrant> read_grant(const std::string& path) {
  std::ifstream in(path);
  GateGrant g;
  if (!(in >> g.job_id >> g.site >> g.at)) return std::nullopt;
  return g;
}

}  // namespace

std::string gate_dir(const Run& run) { return race_dir(run) + "/gate"; }

void init_gate(const Run& run, const std::string& coordinator, const std::string& site, long long gate_s) {
  fs::create_directories(gate_dir(run));
  nlohmann::json j = {{"coordinator", coordinator}, {"site", site}, {"gate_s", gate_s}};
  write_file_atomic(gate_dir(run) + "/site.json", j.dump(2) + "\n");
}

std::optional<std::string> gate_coordinator(const std::string& run_dir) {
  std::error_code ec;
  const std::string path = run_dir + "/race/gate/site.json";
  if (!fs::exists(path, ec)) return std::nullopt;
  try {
    return nlohmann::json::parse(read_file(path)).value("coordinator", "");
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

GateState read_gate(const Run& run) {
  GateState g;
  const std::string dir = gate_dir(run);
  std::error_code ec;
  if (!fs::exists(dir + "/site.json", ec)) return g;
  try {
    auto j = nlohmann::json::parse(read_file(dir + "/site.json"));
    g.coordinator = j.value("coordinator", "");
    g.site = j.value("site", "");
    g.gate_s = j.value("gate_s", 0LL);
    g.is_gate = true;
  } catch (const std::exception&) {
    return g;  // being written, or not ddpctl's: not a gate
  }
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    auto event = [&](const char* prefix, std::vector<RaceEvent>& into) {
      if (name.rfind(prefix, 0) != 0 || (name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0)) return;
      if (auto e = read_race_event(entry.path().string())) into.push_back(*e);
    };
    event("at.", g.at);
    event("passed.", g.passed);
    event("timeout.", g.timeouts);
  }
  auto by_time = [](const RaceEvent& a, const RaceEvent& b) { return a.at < b.at; };
  for (auto* v : {&g.at, &g.passed, &g.timeouts}) std::sort(v->begin(), v->end(), by_time);
  g.grant = read_grant(dir + "/grant");
  if (fs::exists(dir + "/stand-down", ec)) g.stand_down = trim(read_file(dir + "/stand-down"));
  return g;
}

GateGrant write_grant(const Run& run, const std::string& job_id, const std::string& site, double now) {
  const std::string dir = gate_dir(run);
  write_file_exclusive(dir + "/grant", fmt::format("{} {} {:.3f}\n", job_id, site, now));
  auto g = read_grant(dir + "/grant");
  if (!g) throw UserError(Location{dir + "/grant"}, "", "the gate's grant cannot be read");
  return *g;
}

void write_stand_down(const Run& run, const std::string& line) {
  const std::string path = gate_dir(run) + "/stand-down";
  std::error_code ec;
  if (fs::exists(path, ec)) return;
  write_file_atomic(path, line + "\n");
}

}  // namespace ddpctl
