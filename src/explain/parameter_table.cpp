#include "explain/parameter_table.hpp"

#include <cctype>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>

#include "base/text.hpp"

namespace ddpctl {

using json = nlohmann::json;

namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string csv_line(const std::vector<std::string>& fields) {
  std::vector<std::string> q;
  for (const auto& f : fields) q.push_back(csv_field(f));
  return join(q, ",") + "\n";
}

std::string md_cell(std::string s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string states_of(const GridReport& r, const GridGroupRow& g) {
  std::vector<std::string> order;
  std::map<std::string, int> count;
  for (size_t i : g.cells) {
    std::string s = lower(r.cells[i].state);
    if (count[s]++ == 0) order.push_back(s);
  }
  std::vector<std::string> parts;
  for (const auto& s : order) parts.push_back(fmt::format("{} {}", count[s], s));
  return join(parts, ", ");
}

}  // namespace

std::string grid_report_table(const GridReport& r) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head;
  if (r.seed_key) {
    for (size_t k : keys_but(r, r.seed_key)) head.push_back(upper(r.keys[k]));
    head.push_back("N");
    for (const auto& m : r.metrics) head.push_back(upper(m));
    head.push_back("CELLS");
    head.push_back("");
    rows.push_back(head);
    for (const auto& g : r.groups) {
      std::vector<std::string> row;
      for (size_t k : keys_but(r, r.seed_key)) row.push_back(g.values[k]);
      row.push_back(fmt::format("{}/{}", g.completed, g.cells.size()));
      for (const auto& m : r.metrics) {
        auto it = g.metrics.find(m);
        row.push_back(it == g.metrics.end() ? "-" : shown_stat(it->second));
      }
      row.push_back(states_of(r, g));
      row.push_back(g.best ? "<- best" : "");
      rows.push_back(row);
    }
  } else {
    for (const auto& k : r.keys) head.push_back(upper(k));
    for (const char* h : {"TASK", "STATE"}) head.push_back(h);
    for (const auto& m : r.metrics) head.push_back(upper(m));
    head.push_back("");
    rows.push_back(head);
    for (const auto& c : r.cells) {
      std::vector<std::string> row = c.values;
      row.resize(r.keys.size());
      row.push_back(c.task.empty() ? "-" : c.task);
      row.push_back(c.state);
      for (const auto& m : r.metrics) {
        auto it = c.metrics.find(m);
        row.push_back(it == c.metrics.end() ? "-" : shown_value(it->second));
      }
      row.push_back(c.best ? "<- best" : "");
      rows.push_back(row);
    }
  }
  std::string out = fmt::format("{} {}: {}\n", r.kind, r.run_id, r.summary);
  if (r.seed_key)
    out += fmt::format("mean ± std over {} (N: COMPLETED cells of the row's); --seed-key none shows each cell\n",
                       r.keys[*r.seed_key]);
  for (const auto& line : format_columns(rows)) out += "  " + trim(line) + "\n";
  if (!r.best_line.empty()) out += r.best_line + "\n";
  for (const auto& n : r.notes) out += "note: " + n + "\n";
  return out;
}

std::string grid_report_markdown(const GridReport& r) {
  std::vector<std::string> head;
  std::vector<std::vector<std::string>> rows;
  if (r.seed_key) {
    for (size_t k : keys_but(r, r.seed_key)) head.push_back(r.keys[k]);
    head.push_back("n");
    for (const auto& m : r.metrics) head.push_back(m + " (mean ± std)");
    head.push_back("cells");
    for (const auto& g : r.groups) {
      std::vector<std::string> row;
      for (size_t k : keys_but(r, r.seed_key)) row.push_back(g.best ? "**" + g.values[k] + "**" : g.values[k]);
      row.push_back(fmt::format("{}/{}", g.completed, g.cells.size()));
      for (const auto& m : r.metrics) {
        auto it = g.metrics.find(m);
        std::string v = it == g.metrics.end() ? "–" : shown_stat(it->second);
        row.push_back(g.best && m == r.best->metric ? "**" + v + "** (best)" : v);
      }
      row.push_back(states_of(r, g));
      rows.push_back(row);
    }
  } else {
    head = r.keys;
    head.push_back("task");
    head.push_back("state");
    for (const auto& m : r.metrics) head.push_back(m);
    for (const auto& c : r.cells) {
      std::vector<std::string> row;
      for (size_t k = 0; k < r.keys.size(); ++k) {
        std::string v = k < c.values.size() ? c.values[k] : "";
        row.push_back(c.best ? "**" + v + "**" : v);
      }
      row.push_back(c.task.empty() ? "–" : c.task);
      row.push_back(c.state);
      for (const auto& m : r.metrics) {
        auto it = c.metrics.find(m);
        std::string v = it == c.metrics.end() ? "–" : shown_value(it->second);
        row.push_back(c.best && m == r.best->metric ? "**" + v + "** (best)" : v);
      }
      rows.push_back(row);
    }
  }
  std::string out = fmt::format("{} `{}`: {}.", r.kind == "study" ? "Study" : "Sweep", r.run_id, r.summary);
  if (r.seed_key) out += fmt::format(" Mean ± std over `{}`; n: COMPLETED cells of the row's.", r.keys[*r.seed_key]);
  out += "\n\n";
  auto line = [](const std::vector<std::string>& cells) {
    std::string s = "|";
    for (const auto& c : cells) s += " " + md_cell(c) + " |";
    return s + "\n";
  };
  out += line(head);
  std::string sep = "|";
  for (size_t i = 0; i < head.size(); ++i) sep += "---|";
  out += sep + "\n";
  for (const auto& row : rows) out += line(row);
  if (!r.best_line.empty()) out += "\n" + r.best_line + "\n";
  for (const auto& n : r.notes) out += "\nNote: " + n + "\n";
  return out;
}

std::string grid_report_csv(const GridReport& r) {
  std::string out;
  if (r.seed_key) {
    std::vector<std::string> head;
    for (size_t k : keys_but(r, r.seed_key)) head.push_back(r.keys[k]);
    head.push_back("n");
    head.push_back("cells");
    for (const auto& m : r.metrics) head.push_back(m + "_mean"), head.push_back(m + "_std");
    head.push_back("best");
    out += csv_line(head);
    for (const auto& g : r.groups) {
      std::vector<std::string> row;
      for (size_t k : keys_but(r, r.seed_key)) row.push_back(g.values[k]);
      row.push_back(std::to_string(g.completed));
      row.push_back(std::to_string(g.cells.size()));
      for (const auto& m : r.metrics) {
        auto it = g.metrics.find(m);
        row.push_back(it == g.metrics.end() ? "" : exact_value(it->second.mean));
        row.push_back(it == g.metrics.end() || !it->second.std ? "" : exact_value(*it->second.std));
      }
      row.push_back(g.best ? "1" : "");
      out += csv_line(row);
    }
    return out;
  }
  std::vector<std::string> head = r.keys;
  for (const char* h : {"cell", "task", "task_job_id", "state"}) head.push_back(h);
  for (const auto& m : r.metrics) head.push_back(m);
  head.push_back("best");
  out += csv_line(head);
  for (const auto& c : r.cells) {
    std::vector<std::string> row = c.values;
    row.resize(r.keys.size());
    row.push_back(c.name);
    row.push_back(c.task);
    row.push_back(c.task_job_id);
    row.push_back(c.state);
    for (const auto& m : r.metrics) {
      auto it = c.metrics.find(m);
      row.push_back(it == c.metrics.end() ? "" : exact_value(it->second));
    }
    row.push_back(c.best ? "1" : "");
    out += csv_line(row);
  }
  return out;
}

std::string grid_report_json(const GridReport& r) {
  auto values_of = [&](const std::vector<std::string>& values, std::optional<size_t> skip) {
    json v = json::object();
    for (size_t k = 0; k < r.keys.size() && k < values.size(); ++k)
      if ((!skip || k != *skip) && !values[k].empty()) v[r.keys[k]] = values[k];
    return v;
  };
  json cells = json::array();
  for (const auto& c : r.cells) {
    json m = json::object();
    for (const auto& [name, v] : c.metrics) m[name] = v;
    cells.push_back({{"index", c.index}, {"cell", c.name}, {"values", values_of(c.values, std::nullopt)},
                     {"task", c.task}, {"task_job_id", c.task_job_id}, {"state", c.state}, {"metrics", m},
                     {"source", c.source}, {"best", c.best}});
  }
  json keys = json::array();
  for (size_t k = 0; k < r.keys.size(); ++k) keys.push_back({{"name", r.keys[k]}, {"path", r.key_paths[k]}});
  json doc = {{"run", r.run_id}, {"summary", r.summary}, {"keys", keys}, {"metrics", r.metrics}, {"cells", cells}};
  doc["seed_key"] = r.seed_key ? json(r.keys[*r.seed_key]) : json();
  if (r.seed_key) {
    json groups = json::array();
    for (const auto& g : r.groups) {
      json m = json::object();
      for (const auto& [name, s] : g.metrics)
        m[name] = {{"mean", s.mean}, {"std", s.std ? json(*s.std) : json()}, {"n", s.n}};
      json names = json::array();
      for (size_t i : g.cells) names.push_back(r.cells[i].name);
      groups.push_back({{"values", values_of(g.values, r.seed_key)}, {"n", g.completed}, {"cells", names},
                        {"metrics", m}, {"best", g.best}});
    }
    doc["groups"] = groups;
  }
  doc["best"] = r.best ? json{{"metric", r.best->metric}, {"direction", r.best->maximize ? "max" : "min"},
                              {"line", r.best_line}}
                       : json();
  doc["notes"] = r.notes;
  return doc.dump(2) + "\n";
}

}  // namespace ddpctl
