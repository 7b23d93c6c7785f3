#include "race.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "files.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

namespace {

// "<job id> <label> <unix time>" as the scripts write it.
std::optional<RaceEvent> read_event(const fs::path& path) {
  std::ifstream in(path);
  RaceEvent e;
  if (!(in >> e.job_id)) return std::nullopt;
  std::string second;
  if (in >> second) {
    // cancelled.<id> holds "<id> <time>"; the others "<id> <label> <time>".
    std::string third;
    if (in >> third) {
      e.label = second;
      e.at = std::atof(third.c_str());
    } else {
      e.at = std::atof(second.c_str());
    }
  }
  return e;
}

}  // namespace

std::string race_dir(const Run& run) { return run.dir + "/race"; }

void init_race(const Run& run) {
  std::error_code ec;
  fs::create_directories(race_dir(run) + "/jobs", ec);
  if (ec) throw UserError(Location{race_dir(run)}, "", "cannot create the race folder: " + ec.message());
}

RaceState read_race(const Run& run) {
  RaceState s;
  fs::path dir = race_dir(run);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return s;
  s.is_race = true;
  s.claimed = fs::is_directory(dir / "claim", ec);
  if (s.claimed) s.winner = read_event(dir / "claim" / "winner");
  for (const auto& entry : fs::directory_iterator(dir / "jobs", ec)) {
    std::ifstream in(entry.path());
    std::string id;
    if (in >> id) s.job_of_label[entry.path().filename().string()] = id;
  }
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("cancelled.", 0) == 0) {
      if (auto e = read_event(entry.path())) s.cancelled.push_back(*e);
    } else if (name.rfind("stood-down.", 0) == 0) {
      if (auto e = read_event(entry.path())) s.stood_down.push_back(*e);
    }
  }
  return s;
}

void record_race_job(const Run& run, const std::string& label, const std::string& job_id) {
  write_file_atomic(race_dir(run) + "/jobs/" + label, job_id + "\n");
}

}  // namespace ddpctl
