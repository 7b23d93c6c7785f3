#include "race.hpp"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "files.hpp"
#include "jobs.hpp"
#include "text.hpp"

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
      out.push_back(r);
    }
  } catch (const nlohmann::json::exception&) {
    return {};  // a damaged ranking only hides the dropped rows in status
  }
  return out;
}

std::string clock(long long t) {
  char buf[32];
  std::time_t tt = static_cast<std::time_t>(t);
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", std::localtime(&tt));
  return buf;
}

}  // namespace

std::vector<RankedShape> rank_shapes(std::vector<RankedShape> shapes) {
  auto order = [](const RankedShape& r) {
    if (r.dropped) return 2;
    return r.estimate.kind == StartEstimate::Kind::Starts ? 0 : 1;
  };
  std::stable_sort(shapes.begin(), shapes.end(), [&](const RankedShape& a, const RankedShape& b) {
    if (order(a) != order(b)) return order(a) < order(b);
    return order(a) == 0 && a.estimate.start < b.estimate.start;
  });
  return shapes;
}

std::vector<std::string> format_ranking(const std::vector<RankedShape>& ranking, long long now) {
  std::vector<std::vector<std::string>> rows = {{"RANK", "SHAPE", "ESTIMATED START", "NODES", "PARTITION", "WHY"}};
  int rank = 0;
  for (const auto& r : ranking) {
    if (r.dropped) {
      rows.push_back({"-", r.label, "never (dropped)", "-", "-", r.why_dropped});
    } else if (r.estimate.kind != StartEstimate::Kind::Starts) {
      rows.push_back({std::to_string(++rank), r.label, "unknown", "-", "-", r.estimate.reason});
    } else {
      long long wait = r.estimate.start - now;
      std::string start = wait <= 0 ? "now" : fmt::format("in {} ({})", format_duration(wait), clock(r.estimate.start));
      rows.push_back({std::to_string(++rank), r.label, start, r.estimate.nodes, r.estimate.partition, ""});
    }
  }
  return format_columns(rows);
}

RaceOutcome race_outcome(const RaceState& race, const JobStates& states) {
  if (race.winner) return RaceOutcome::Won;
  bool all_ended = !race.job_of_label.empty();
  for (const auto& [label, id] : race.job_of_label) {
    auto it = states.jobs.find(id);
    all_ended = all_ended && it != states.jobs.end() && is_terminal(it->second.state);
  }
  // A job that claimed may still be writing the winner file: claimed is not failed.
  return all_ended && !race.claimed ? RaceOutcome::Failed : RaceOutcome::Racing;
}

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
  s.ranking = read_ranking(dir / "ranking.json");
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
                   {"why_dropped", r.why_dropped}});
  write_file_atomic(race_dir(run) + "/ranking.json", out.dump(2) + "\n");
}

void record_race_job(const Run& run, const std::string& label, const std::string& job_id) {
  write_file_atomic(race_dir(run) + "/jobs/" + label, job_id + "\n");
}

}  // namespace ddpctl
