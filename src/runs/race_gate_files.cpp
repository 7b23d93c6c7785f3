#include "explain/race_gate.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
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

std::string gate_site(const std::string& run_dir) {
  try {
    auto j = nlohmann::json::parse(read_file(run_dir + "/race/gate/site.json"));
    return j.value("site", "");
  } catch (const std::exception&) {
    return "";
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
  // The newest round: the highest round.<N> (a site may skip one it was
  // not reached for).
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("round.", 0) != 0 || !entry.is_directory(ec)) continue;
    const std::string n = name.substr(6);
    if (n.empty() || n.size() > 4 || n.find_first_not_of("0123456789") != std::string::npos) continue;
    g.round = std::max(g.round, std::stoi(n));
  }
  g.round_dir = gate_round_dir(run, g.round);
  if (g.round > 1 && fs::exists(g.round_dir + "/opened", ec)) g.opened = trim(read_file(g.round_dir + "/opened"));
  for (const auto& entry : fs::directory_iterator(g.round_dir, ec)) {
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
  g.grant = read_grant(g.round_dir + "/grant");
  if (fs::exists(g.round_dir + "/stand-down", ec)) g.stand_down = trim(read_file(g.round_dir + "/stand-down"));
  return g;
}

std::string gate_round_dir(const Run& run, int n) {
  return n <= 1 ? gate_dir(run) : fmt::format("{}/round.{}", gate_dir(run), n);
}

bool open_gate_round(const Run& run, int n, const std::string& why, double now) {
  if (n < 2) return false;
  const std::string dir = gate_round_dir(run, n);
  if (::mkdir(dir.c_str(), 0755) != 0) return false;
  std::string line = why;
  std::replace(line.begin(), line.end(), '\n', ' ');
  write_file_atomic(dir + "/opened", fmt::format("{:.3f} {}\n", now, line));
  return true;
}

GateGrant write_grant(const std::string& dir, const std::string& job_id, const std::string& site, double now) {
  write_file_exclusive(dir + "/grant", fmt::format("{} {} {:.3f}\n", job_id, site, now));
  auto g = read_grant(dir + "/grant");
  if (!g) throw UserError(Location{dir + "/grant"}, "", "the gate's grant cannot be read");
  return *g;
}

void write_stand_down(const std::string& dir, const std::string& line) {
  const std::string path = dir + "/stand-down";
  std::error_code ec;
  if (fs::exists(path, ec)) return;
  write_file_atomic(path, line + "\n");
}

}  // namespace ddpctl
