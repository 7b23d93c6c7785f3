#include "runs/race_gate_files.hpp"

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
#include "runs/race_contract.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

namespace {

std::optional<GateGrant> read_grant(const std::string& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::optional<GrantLine> l = parse_grant_line(text);
  if (!l) return std::nullopt;
  return GateGrant{l->job_id, l->site, l->at};
}

std::string in(const std::string& dir, RaceFile f) { return dir + "/" + race_file_name(f); }

}  // namespace

std::string gate_dir(const Run& run) { return in(race_dir(run), RaceFile::Gate); }

void init_gate(const Run& run, const std::string& coordinator, const std::string& site, long long gate_s) {
  fs::create_directories(gate_dir(run));
  nlohmann::json j = {{"coordinator", coordinator}, {"site", site}, {"gate_s", gate_s}};
  write_file_atomic(in(gate_dir(run), RaceFile::GateSite), j.dump(2) + "\n");
}

std::optional<std::string> gate_coordinator(const std::string& run_dir) {
  std::error_code ec;
  const std::string path = in(in(run_dir + "/race", RaceFile::Gate), RaceFile::GateSite);
  if (!fs::exists(path, ec)) return std::nullopt;
  try {
    return nlohmann::json::parse(read_file(path)).value("coordinator", "");
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string gate_site(const std::string& run_dir) {
  try {
    auto j = nlohmann::json::parse(read_file(in(in(run_dir + "/race", RaceFile::Gate), RaceFile::GateSite)));
    return j.value("site", "");
  } catch (const std::exception&) {
    return "";
  }
}

GateState read_gate(const Run& run) {
  GateState g;
  const std::string dir = gate_dir(run);
  std::error_code ec;
  if (!fs::exists(in(dir, RaceFile::GateSite), ec)) return g;
  try {
    auto j = nlohmann::json::parse(read_file(in(dir, RaceFile::GateSite)));
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
    const std::string round = race_file_name(RaceFile::Round);
    if (name.rfind(round, 0) != 0 || !entry.is_directory(ec)) continue;
    const std::string n = name.substr(round.size());
    if (n.empty() || n.size() > 4 || n.find_first_not_of("0123456789") != std::string::npos) continue;
    g.round = std::max(g.round, std::stoi(n));
  }
  g.round_dir = gate_round_dir(run, g.round);
  if (g.round > 1 && fs::exists(in(g.round_dir, RaceFile::Opened), ec))
    g.opened = trim(read_file(in(g.round_dir, RaceFile::Opened)));
  for (const auto& entry : fs::directory_iterator(g.round_dir, ec)) {
    const std::string name = entry.path().filename().string();
    auto event = [&](RaceFile file, std::vector<RaceEvent>& into) {
      const std::string prefix = race_file_name(file);
      if (name.rfind(prefix, 0) != 0 || (name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0)) return;
      if (auto e = read_race_event(entry.path().string())) into.push_back(*e);
    };
    event(RaceFile::AtGate, g.at);
    event(RaceFile::Passed, g.passed);
    event(RaceFile::Timeout, g.timeouts);
  }
  auto by_time = [](const RaceEvent& a, const RaceEvent& b) { return a.at < b.at; };
  for (auto* v : {&g.at, &g.passed, &g.timeouts}) std::sort(v->begin(), v->end(), by_time);
  g.grant = read_grant(in(g.round_dir, RaceFile::Grant));
  if (fs::exists(in(g.round_dir, RaceFile::StandDown), ec)) g.stand_down = trim(read_file(in(g.round_dir, RaceFile::StandDown)));
  return g;
}

std::string gate_round_dir(const Run& run, int n) {
  return n <= 1 ? gate_dir(run) : fmt::format("{}/{}{}", gate_dir(run), race_file_name(RaceFile::Round), n);
}

bool open_gate_round(const Run& run, int n, const std::string& why, double now) {
  if (n < 2) return false;
  const std::string dir = gate_round_dir(run, n);
  if (::mkdir(dir.c_str(), 0755) != 0) return false;
  std::string line = why;
  std::replace(line.begin(), line.end(), '\n', ' ');
  write_file_atomic(in(dir, RaceFile::Opened), fmt::format("{:.3f} {}\n", now, line));
  return true;
}

GateGrant write_grant(const std::string& dir, const std::string& job_id, const std::string& site, double now) {
  write_file_exclusive(in(dir, RaceFile::Grant), grant_line({job_id, site, now}) + "\n");
  auto g = read_grant(in(dir, RaceFile::Grant));
  if (!g) throw UserError(Location{in(dir, RaceFile::Grant)}, "", "the gate's grant cannot be read");
  return *g;
}

void write_stand_down(const std::string& dir, const std::string& line) {
  const std::string path = in(dir, RaceFile::StandDown);
  std::error_code ec;
  if (fs::exists(path, ec)) return;
  write_file_atomic(path, line + "\n");
}

}  // namespace ddpctl
