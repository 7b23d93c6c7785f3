#include "status/status_watch.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <ostream>

#include "runs/provenance_record.hpp"
#include "runs/snapshot_record.hpp"

namespace ddpctl {

namespace {

// What identifies a row from one poll to the next, and what counts as a
// change (not the running clock).
std::string row_key(const StatusRow& r) { return r.run + "\x1f" + r.job + "\x1f" + r.shape; }
std::string row_news(const StatusRow& r) { return r.state + "\x1f" + r.info + "\x1f" + r.nodes + "\x1f" + r.gpus; }

// Named runs: what code each runs, below the table, and what each job's
// latest attempt ran with.
void add_run_lines(const StatusReport& report, const std::string& runs_root, std::vector<std::string>& lines) {
  std::vector<std::string> seen;
  for (const auto& r : report.rows) {
    if (r.run == "-" || std::find(seen.begin(), seen.end(), r.run) != seen.end()) continue;
    seen.push_back(r.run);
    lines.push_back(fmt::format("{} code: {}", r.run, snapshot_summary(runs_root + "/" + r.run)));
    if (auto v = r.json.find("ddpctl"); v != r.json.end() && v->is_string())
      lines.push_back(fmt::format("{} submitted by ddpctl {}", r.run, v->get<std::string>()));
  }
  for (const auto& r : report.rows)
    if (auto it = r.json.find("environment"); it != r.json.end())
      if (auto e = parse_provenance(it->dump())) lines.push_back(fmt::format("job {} ran: {}", r.job, provenance_line(*e)));
  for (const auto& r : report.rows)
    if (auto it = r.json.find("account"); it != r.json.end() && it->contains("text"))
      lines.push_back(fmt::format("job {} used {}", r.job, (*it)["text"].get<std::string>()));
}

}  // namespace

StatusFrame status_frame(const StatusReport& report, const StatusRequest& request,
                         const std::function<std::string(const std::string&, Tone)>& paint) {
  StatusFrame f;
  f.all_done = report.all_done;
  if (request.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : report.rows) out.push_back(r.json);
    f.lines = {out.dump(2)};
  } else if (report.rows.empty()) {
    f.lines = {report.older_runs ? fmt::format("no active or recent runs under {}; {}", request.runs_root,
                                               older_runs_line(report.older_runs))
                                 : fmt::format("no runs under {}", request.runs_root)};
  } else {
    f.lines = status_table(report.rows, paint);
    if (report.older_runs) f.lines.push_back(older_runs_line(report.older_runs));
    for (const auto& r : report.rows) f.keys.push_back(row_key(r)), f.news.push_back(row_news(r));
    if (!request.targets.empty()) add_run_lines(report, request.runs_root, f.lines);
  }
  return f;
}

void watch_status(const StatusWatch& w, Clock& clock, std::ostream& out) {
  // One Slurm call per poll whatever the number of runs; polls slow down
  // while nothing changes.
  PollBackoff backoff(w.poll_s, kWatchMaxPollS);
  const std::string title = fmt::format("ddpctl status, every {}-{}s (Ctrl-C to stop)", backoff.base(), backoff.max());
  std::map<std::string, std::string> shown;  // row key -> its last news
  bool first = true;
  for (;;) {
    StatusFrame f = w.poll();
    auto is_news = [&](size_t i) {
      auto it = shown.find(f.keys[i]);
      return it == shown.end() || it->second != f.news[i];
    };
    bool changed = first || f.keys.size() != shown.size();
    for (size_t i = 0; i < f.keys.size(); ++i) changed = is_news(i) || changed;
    if (w.terminal) {
      out << (first ? "\033[H\033[2J" : "\033[H") << title << "\033[K\n";
      for (const auto& line : f.lines) out << line << "\033[K\n";
      out << "\033[J";
    } else if (first || f.keys.empty()) {
      if (first) out << title << '\n';
      if (first || w.json)
        for (const auto& line : f.lines) out << line << '\n';
    } else {
      for (size_t i = 0; i < f.keys.size(); ++i)
        if (is_news(i)) out << f.lines[i + 1] << '\n';
    }
    shown.clear();
    for (size_t i = 0; i < f.keys.size(); ++i) shown[f.keys[i]] = f.news[i];
    first = false;
    out.flush();
    if (f.all_done) return;
    clock.sleep(backoff.after_poll(changed));
  }
}

}  // namespace ddpctl
