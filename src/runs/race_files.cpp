#include "explain/race.hpp"

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
#include "runs/jobs.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

// "<job id> <label> <unix time> [<attempt>]" as the scripts write it.
std::optional<RaceEvent> read_race_event(const std::string& path) {
  std::ifstream in(path);
  RaceEvent e;
  if (!(in >> e.job_id)) return std::nullopt;
  std::string second;
  if (in >> second) {
    // cancelled.<id> holds "<id> <time>"; the others "<id> <label> <time>",
    // winner files (since re-racing) also the attempt that claimed.
    std::string third;
    if (in >> third) {
      e.label = second;
      e.at = std::atof(third.c_str());
      std::string fourth;
      if (in >> fourth) e.attempt = std::atoi(fourth.c_str());
    } else {
      e.at = std::atof(second.c_str());
    }
  }
  return e;
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
  if (g.claimed) g.winner = read_event(claim / "winner");
  g.job_of_label = read_jobs(race_jobs_dir(run, n));
  if (n > 1) {
    fs::path why = fs::path(race_dir(run)) / fmt::format("gen.{}", n) / "why";
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

std::vector<RankedShape> rank_by_finish(std::vector<RankedShape> shapes, long long now, std::string& note) {
  for (const auto& r : shapes)
    if (!r.dropped && !r.run_time_s) {
      note = fmt::format("no predicted run time for shape {}: ranked by estimated start", r.label);
      return rank_shapes(shapes);
    }
  // Whole seconds, as shown.
  auto run_time = [](const RankedShape& r) { return static_cast<long long>(std::llround(*r.run_time_s)); };
  const RankedShape* best = nullptr;
  for (auto& r : shapes) {
    if (r.dropped || r.estimate.kind != StartEstimate::Kind::Starts) continue;
    r.finish = std::max(r.estimate.start, now) + run_time(r);
    if (!best || *r.finish < *best->finish) best = &r;
  }
  if (best) {
    // Copies: `best` points into the vector being changed.
    const std::string best_label = best->label;
    const long long best_finish = *best->finish;
    for (auto& r : shapes) {
      if (r.dropped || r.label == best_label) continue;
      if (now + run_time(r) <= best_finish) continue;
      r.dropped = true;
      r.why_dropped = fmt::format(
          "even starting now it would finish in {} ({} run time), after shape {}'s predicted finish in {}",
          format_duration(run_time(r)), format_duration(run_time(r)), best_label, format_duration(best_finish - now));
    }
  }
  auto order = [](const RankedShape& r) {
    if (r.dropped) return 2;
    return r.finish ? 0 : 1;
  };
  std::stable_sort(shapes.begin(), shapes.end(), [&](const RankedShape& a, const RankedShape& b) {
    if (order(a) != order(b)) return order(a) < order(b);
    return order(a) == 0 && *a.finish < *b.finish;
  });
  return shapes;
}

std::vector<std::string> format_ranking(const std::vector<RankedShape>& ranking, long long now) {
  bool timed = std::any_of(ranking.begin(), ranking.end(), [](const RankedShape& r) { return r.run_time_s.has_value(); });
  std::vector<std::vector<std::string>> rows = {{"RANK", "SHAPE", "ESTIMATED START"}};
  if (timed) rows[0].insert(rows[0].end(), {"RUN TIME", "PREDICTED FINISH"});
  rows[0].insert(rows[0].end(), {"NODES", "PARTITION", "WHY"});
  auto when = [&](long long t) {
    long long wait = t - now;
    return wait <= 0 ? std::string("now") : fmt::format("in {} ({})", format_duration(wait), clock(t));
  };
  int rank = 0;
  for (const auto& r : ranking) {
    std::vector<std::string> row;
    std::string why;
    if (r.dropped) {
      bool runnable = r.estimate.kind == StartEstimate::Kind::Starts && r.run_time_s;
      row = {"-", r.label, runnable ? when(r.estimate.start) : "never (dropped)"};
      why = r.why_dropped;
    } else if (r.estimate.kind != StartEstimate::Kind::Starts) {
      row = {std::to_string(++rank), r.label, "unknown"};
      why = r.estimate.reason;
    } else {
      row = {std::to_string(++rank), r.label, when(r.estimate.start)};
      why = r.note;
    }
    if (timed) {
      row.push_back(r.run_time_s ? fmt::format("{} ({})", format_duration(std::llround(*r.run_time_s)),
                                               r.run_time_from)
                                 : "unknown");
      row.push_back(r.finish && !r.dropped ? when(*r.finish) : r.dropped && r.run_time_s ? "dropped" : "-");
    }
    bool placed = r.estimate.kind == StartEstimate::Kind::Starts;
    row.push_back(placed && !r.estimate.nodes.empty() ? r.estimate.nodes : "-");
    row.push_back(placed && !r.estimate.partition.empty() ? r.estimate.partition : "-");
    row.push_back(why);
    rows.push_back(row);
  }
  return format_columns(rows);
}

RaceOutcome race_outcome(const RaceState& race, const JobStates& states) {
  if (race.winner()) return RaceOutcome::Won;
  bool all_ended = !race.job_of_label().empty();
  for (const auto& [label, id] : race.job_of_label()) {
    auto it = states.jobs.find(id);
    all_ended = all_ended && it != states.jobs.end() && is_terminal(it->second.state);
  }
  // A job that claimed may still be writing the winner file: claimed is not failed.
  return all_ended && !race.claimed() ? RaceOutcome::Failed : RaceOutcome::Racing;
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
  for (int n = 1; n == 1 || fs::is_directory(dir / fmt::format("gen.{}", n), ec); ++n)
    s.generations.push_back(read_generation(run, n));
  s.ranking = read_ranking(dir / "ranking.json");
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
                   {"why_dropped", r.why_dropped},
                   {"note", r.note},
                   {"run_time_s", r.run_time_s ? nlohmann::json(*r.run_time_s) : nlohmann::json()},
                   {"run_time_from", r.run_time_from},
                   {"finish", r.finish ? nlohmann::json(*r.finish) : nlohmann::json()}});
  write_file_atomic(race_dir(run) + "/ranking.json", out.dump(2) + "\n");
}

std::string claim_dir(const Run& run, int generation) {
  return race_dir(run) + (generation <= 1 ? "/claim" : fmt::format("/claim.{}", generation));
}

std::string race_jobs_dir(const Run& run, int generation) {
  return race_dir(run) + (generation <= 1 ? "/jobs" : fmt::format("/gen.{}/jobs", generation));
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
