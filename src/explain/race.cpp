#include "explain/race.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <fmt/format.h>

#include "base/text.hpp"

namespace ddpctl {

namespace {

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

}  // namespace ddpctl
