#include "runs/race_files.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/json_fields.hpp"
#include "base/files.hpp"
#include "runs/job_states.hpp"
#include "base/text.hpp"
#include "runs/race_contract.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

// A race event line (race_contract.hpp) as the scripts write it.
std::optional<RaceEvent> read_race_event(const std::string& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::optional<RaceLine> l = parse_race_event_line(text);
  if (!l) return std::nullopt;
  return RaceEvent{l->job_id, l->label, l->at, l->attempt};
}

namespace {

std::optional<RaceEvent> read_event(const fs::path& path) { return read_race_event(path.string()); }

std::map<std::string, std::string> read_jobs(const fs::path& dir) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::ifstream in(entry.path());
    std::string id;
    if (in >> id) out[entry.path().filename().string()] = id;
  }
  return out;
}

RaceGeneration read_generation(const Run& run, int n) {
  RaceGeneration g;
  g.number = n;
  std::error_code ec;
  fs::path claim = claim_dir(run, n);
  g.claimed = fs::is_directory(claim, ec);
  if (g.claimed) g.winner = read_event(claim / race_file_name(RaceFile::Winner));
  g.job_of_label = read_jobs(race_jobs_dir(run, n));
  if (n > 1) {
    fs::path why = fs::path(race_dir(run)) / (race_file_name(RaceFile::Generation) + std::to_string(n)) /
                   race_file_name(RaceFile::Why);
    if (fs::exists(why, ec)) {
      // "<unix time> <words>"
      std::string text = read_file(why.string());
      while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
      size_t space = text.find(' ');
      g.opened_at = std::atof(text.substr(0, space).c_str());
      g.why = space == std::string::npos ? "" : text.substr(space + 1);
    }
  }
  return g;
}

const char* kind_name(StartEstimate::Kind k) {
  switch (k) {
    case StartEstimate::Kind::Starts:
      return "starts";
    case StartEstimate::Kind::Impossible:
      return "impossible";
    case StartEstimate::Kind::Unknown:
      break;
  }
  return "unknown";
}

StartEstimate::Kind kind_of(const std::string& name) {
  if (name == "starts") return StartEstimate::Kind::Starts;
  if (name == "impossible") return StartEstimate::Kind::Impossible;
  return StartEstimate::Kind::Unknown;
}

std::vector<RankedShape> read_ranking(const fs::path& path) {
  std::vector<RankedShape> out;
  std::error_code ec;
  if (!fs::exists(path, ec)) return out;
  try {
    for (const auto& j : nlohmann::json::parse(read_file(path.string()))) {
      RankedShape r;
      r.label = j.value("label", "");
      r.estimate.kind = kind_of(j.value("estimate", ""));
      r.estimate.start = j.value("start", 0LL);
      r.estimate.nodes = j.value("nodes", "");
      r.estimate.partition = j.value("partition", "");
      r.estimate.reason = j.value("reason", "");
      r.dropped = j.value("dropped", false);
      r.why_dropped = j.value("why_dropped", "");
      r.note = j.value("note", "");
      if (auto v = json_field::number(j, "run_time_s")) r.run_time_s = *v;
      r.run_time_from = j.value("run_time_from", "");
      if (auto v = json_field::integer(j, "finish")) r.finish = *v;
      out.push_back(r);
    }
  } catch (const nlohmann::json::exception&) {
    return {};  // a damaged ranking only hides the dropped rows in status
  }
  return out;
}

}  // namespace

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
  for (int n = 1; n == 1 || fs::is_directory(dir / (race_file_name(RaceFile::Generation) + std::to_string(n)), ec); ++n)
    s.generations.push_back(read_generation(run, n));
  s.ranking = read_ranking(dir / race_file_name(RaceFile::Ranking));
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind(race_file_name(RaceFile::Cancelled), 0) == 0) {
      if (auto e = read_event(entry.path())) s.cancelled.push_back(*e);
    } else if (name.rfind(race_file_name(RaceFile::StoodDown), 0) == 0) {
      if (auto e = read_event(entry.path())) s.stood_down.push_back(*e);
    }
  }
  return s;
}

void record_ranking(const Run& run, const std::vector<RankedShape>& ranking) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : ranking)
    out.push_back({{"label", r.label},
                   {"estimate", kind_name(r.estimate.kind)},
                   {"start", r.estimate.start},
                   {"nodes", r.estimate.nodes},
                   {"partition", r.estimate.partition},
                   {"reason", r.estimate.reason},
                   {"dropped", r.dropped},
                   {"why_dropped", r.why_dropped},
                   {"note", r.note},
                   {"run_time_s", r.run_time_s ? nlohmann::json(*r.run_time_s) : nlohmann::json()},
                   {"run_time_from", r.run_time_from},
                   {"finish", r.finish ? nlohmann::json(*r.finish) : nlohmann::json()}});
  write_file_atomic(race_dir(run) + "/" + race_file_name(RaceFile::Ranking), out.dump(2) + "\n");
}

std::string claim_dir(const Run& run, int generation) {
  const std::string claim = race_dir(run) + "/" + race_file_name(RaceFile::Claim);
  return generation <= 1 ? claim : fmt::format("{}.{}", claim, generation);
}

std::string race_jobs_dir(const Run& run, int generation) {
  const std::string jobs = race_file_name(RaceFile::Jobs);
  return race_dir(run) + (generation <= 1 ? "/" + jobs
                                          : fmt::format("/{}{}/{}", race_file_name(RaceFile::Generation), generation, jobs));
}

const RaceGeneration* generation_won_by(const RaceState& race, const std::string& job_id) {
  for (const auto& g : race.generations)
    if (g.winner && g.winner->job_id == job_id) return &g;
  return nullptr;
}

void record_race_job(const Run& run, const std::string& label, const std::string& job_id, int generation) {
  write_file_atomic(race_jobs_dir(run, generation) + "/" + label, job_id + "\n");
}

}  // namespace ddpctl
