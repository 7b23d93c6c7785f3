#include "script/runs.hpp"

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <map>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/random.h>
#include <unistd.h>

#include "base/token.hpp"
#include "base/files.hpp"
#include "base/text.hpp"
#include "base/values.hpp"
#include "base/version.hpp"

namespace ddpctl {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

bool is_run_dir(const fs::directory_entry& entry) {
  std::error_code ec;
  return entry.is_directory(ec) && fs::exists(entry.path() / "run.json", ec);
}

void sort_runs(std::vector<Run>& runs) {
  std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) {
    return std::tie(a.created_at, a.id) < std::tie(b.created_at, b.id);
  });
}

}  // namespace

std::string runs_root(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("DDPCTL_RUNS"); env && *env) return env;
  return "runs";
}

std::string utc_now_iso() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

long long parse_utc_iso(const std::string& s) {
  std::tm tm{};
  const char* end = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  if (!end || *end) return 0;
  return static_cast<long long>(timegm(&tm));
}

std::string run_identity(const std::vector<SpecSource>& specs, const std::vector<std::string>& overrides,
                         const std::string& shape) {
  // FNV-1a over the first spec's path and text, then the overrides and the
  // rest; the same bytes as the hashes written before this function existed,
  // so runs recorded by earlier versions are still recognised.
  unsigned long long h = 1469598103934665603ULL;
  auto feed = [&h](const std::string& s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
    h = (h ^ 0xff) * 1099511628211ULL;  // separator
  };
  const SpecSource& first = specs.at(0);
  feed(absolute_path(first.path));
  feed(first.text);
  for (const auto& o : overrides) feed(o);
  if (!shape.empty()) {
    feed("--shape=" + shape);
  } else {
    feed("--race");
    for (size_t k = 1; k < specs.size(); ++k) feed(fs::absolute(specs[k].path).string() + '\n' + specs[k].text);
  }
  return fmt::format("{:016x}", h);
}

Run create_run(const std::string& root, const ResolvedRun& resolved, const std::string& spec_text,
               const std::vector<std::string>& overrides, const std::string& hash,
               const std::vector<std::pair<std::string, std::string>>& scripts) {
  return create_run(root, std::vector<RunPart>{{&resolved, spec_text}}, overrides, hash, scripts);
}

std::string new_run_id(const std::string& name, const std::string& created_at) {
  std::string stamp = created_at;
  stamp.erase(std::remove_if(stamp.begin(), stamp.end(), [](char c) { return c == '-' || c == ':'; }), stamp.end());
  return fmt::format("{}-{}-{}", name, stamp, new_token().substr(0, 6));
}

Run create_run(const std::string& root, const std::vector<RunPart>& parts, const std::vector<std::string>& overrides,
               const std::string& hash, const std::vector<std::pair<std::string, std::string>>& scripts,
               const std::string& id) {
  const ResolvedRun& first = *parts.at(0).resolved;
  Run run;
  run.name = first.spec.name;
  run.cluster = first.profile.name;
  run.spec_file = absolute_path(first.spec.file);
  run.spec_hash = hash;
  run.created_at = utc_now_iso();
  run.cwd = fs::current_path().string();
  run.output_dir = absolute_path(first.spec.output_dir);
  run.overrides = overrides;
  run.id = id.empty() ? new_run_id(run.name, run.created_at) : id;
  run.dir = absolute_path((fs::path(root) / run.id).string());
  std::vector<const ResolvedShape*> resolved_shapes;
  for (const auto& part : parts) {
    const ResolvedRun& r = *part.resolved;
    for (const auto& s : r.shapes) {
      RunShape rs;
      rs.label = s.label;
      rs.job_name = s.job_name;
      rs.script = s.script_name;
      rs.partition = s.partition;
      rs.spec_file = absolute_path(r.spec.file);
      rs.output_dir = absolute_path(r.spec.output_dir);
      rs.nodes = s.nodes;
      rs.gpus_per_node = s.gpus_per_node;
      rs.ranks_per_node = s.ranks_per_node;
      rs.per_gpu = r.spec.launch == LaunchMode::PerGpu;
      rs.time_s = s.time_s;
      rs.max_restarts = r.spec.requeue ? r.spec.requeue->max_restarts : 0;
      rs.progress = r.spec.progress;
      rs.metric = r.spec.metric;
      rs.comment = r.spec.site.comment;
      run.shapes.push_back(rs);
      resolved_shapes.push_back(&s);
    }
  }

  std::error_code ec;
  fs::create_directories(run.dir, ec);
  if (ec) throw UserError(Location{run.dir}, "", "cannot create the run directory: " + ec.message());
  for (size_t i = 0; i < parts.size(); ++i)
    write_file_atomic(run.dir + (i == 0 ? std::string("/spec.yaml") : fmt::format("/spec.{}.yaml", i + 1)),
                      parts[i].spec_text);
  write_files_atomic(run.dir, scripts, 0755);

  json shapes = json::array();
  for (size_t i = 0; i < run.shapes.size(); ++i) {
    const RunShape& s = run.shapes[i];
    json progress = nullptr;
    if (s.progress)
      progress = {{"preset", s.progress->preset}, {"pattern", s.progress->pattern}, {"file", s.progress->file},
                  {"epochs", s.progress->epochs ? json(*s.progress->epochs) : json()},
                  {"epoch_base", s.progress->epoch_base}};
    json metric = nullptr;
    if (s.metric) metric = {{"patterns", s.metric->patterns}, {"file", s.metric->file}};
    shapes.push_back({{"label", s.label},
                      {"job_name", s.job_name},
                      {"script", s.script},
                      {"partition", s.partition},
                      {"spec_file", s.spec_file},
                      {"output_dir", s.output_dir},
                      {"nodes", s.nodes},
                      {"gpus_per_node", s.gpus_per_node},
                      {"ranks_per_node", s.ranks_per_node},
                      {"per_gpu", s.per_gpu},
                      {"time_s", s.time_s},
                      {"max_restarts", s.max_restarts},
                      {"progress", progress},
                      {"metric", metric},
                      {"comment", s.comment},
                      {"directives", resolved_shapes[i]->directives}});
  }
  json meta = {{"format", 1},
               {"name", run.name},
               {"cluster", run.cluster},
               {"spec_file", run.spec_file},
               {"spec_hash", run.spec_hash},
               {"overrides", run.overrides},
               {"created_at", run.created_at},
               {"cwd", run.cwd},
               {"output_dir", run.output_dir},
               {"ddpctl", ddpctl_version()},
               {"shapes", shapes}};
  write_file_atomic(run.dir + "/run.json", meta.dump(2) + "\n");
  save_ledger(run);
  return run;
}

std::string identity_lock_path(const std::string& root, const std::string& identity) {
  return (fs::path(root) / ".locks" / (identity + ".lock")).string();
}

Run load_run(const std::string& dir) {
  Run run;
  run.dir = absolute_path(dir);
  run.id = fs::path(run.dir).filename().string();
  json meta, ledger;
  try {
    meta = json::parse(read_file(run.dir + "/run.json"));
    ledger = json::parse(read_file(run.dir + "/ledger.json"));
  } catch (const json::exception& e) {
    throw UserError(Location{run.dir}, "", std::string("damaged run record: ") + e.what());
  }
  run.name = meta.value("name", "");
  run.cluster = meta.value("cluster", "");
  run.spec_file = meta.value("spec_file", "");
  run.spec_hash = meta.value("spec_hash", "");
  run.overrides = meta.value("overrides", std::vector<std::string>{});
  run.created_at = meta.value("created_at", "");
  run.cwd = meta.value("cwd", "");
  run.ddpctl_version = meta.value("ddpctl", "");
  run.output_dir = meta.value("output_dir", "");
  for (const auto& s : meta.value("shapes", json::array())) {
    RunShape rs;
    rs.label = s.value("label", "");
    rs.job_name = s.value("job_name", "");
    rs.script = s.value("script", "");
    rs.partition = s.value("partition", "");
    rs.spec_file = s.value("spec_file", run.spec_file);  // records before races of several specs
    rs.output_dir = s.value("output_dir", run.output_dir);
    rs.nodes = s.value("nodes", 1);
    rs.gpus_per_node = s.value("gpus_per_node", 0);
    rs.ranks_per_node = s.value("ranks_per_node", 1);
    rs.per_gpu = s.value("per_gpu", false);
    rs.comment = s.value("comment", "");
    rs.time_s = s.value("time_s", 0LL);
    rs.max_restarts = s.value("max_restarts", 0);
    if (auto p = s.find("progress"); p != s.end() && p->is_object()) {
      ProgressSpec ps;
      ps.preset = p->value("preset", "");
      ps.pattern = p->value("pattern", "");
      ps.file = p->value("file", "rank0");
      if (auto e = p->find("epochs"); e != p->end() && e->is_number_integer()) ps.epochs = e->get<int>();
      ps.epoch_base = p->value("epoch_base", 1);
      rs.progress = ps;
    }
    if (auto m = s.find("metric"); m != s.end() && m->is_object()) {
      MetricSpec ms;
      ms.patterns = m->value("patterns", std::vector<std::string>{});
      ms.file = m->value("file", "rank0");
      rs.metric = ms;
    }
    run.shapes.push_back(rs);
  }
  run.attempts = ledger_attempts(ledger);
  if (fs::exists(run.dir + "/grid.json")) {
    try {
      json g = json::parse(read_file(run.dir + "/grid.json", 64 << 20));
      RunGrid grid;
      for (const auto& k : g.value("keys", json::array()))
        grid.keys.emplace_back(k.value("path", ""), k.value("name", ""));
      if (auto m = g.find("max_parallel"); m != g.end() && m->is_number_integer()) grid.max_parallel = m->get<int>();
      grid.raced = g.value("raced", false);
      for (const auto& c : g.value("cells", json::array())) {
        RunCell cell;
        cell.index = c.value("index", 0);
        cell.name = c.value("name", "");
        cell.shape = c.value("shape", "");
        cell.dir = c.value("dir", "");
        for (const auto& v : c.value("values", json::array()))
          cell.values.emplace_back(v.value("key", ""), v.value("value", ""));
        grid.cells.push_back(std::move(cell));
      }
      run.grid = std::move(grid);
    } catch (const json::exception& e) {
      throw UserError(Location{run.dir + "/grid.json"}, "", std::string("damaged grid record: ") + e.what());
    }
  }
  return run;
}

void save_grid(const Run& run) {
  if (!run.grid) return;
  json keys = json::array(), cells = json::array();
  for (const auto& [path, name] : run.grid->keys) keys.push_back({{"path", path}, {"name", name}});
  for (const auto& c : run.grid->cells) {
    json values = json::array();
    for (const auto& [k, v] : c.values) values.push_back({{"key", k}, {"value", v}});
    cells.push_back({{"index", c.index}, {"name", c.name}, {"shape", c.shape}, {"dir", c.dir}, {"values", values}});
  }
  json g{{"format", 1}, {"keys", keys}, {"cells", cells}};
  if (run.grid->max_parallel) g["max_parallel"] = *run.grid->max_parallel;
  if (run.grid->raced) g["raced"] = true;
  write_file_atomic(run.dir + "/grid.json", g.dump(1) + "\n");
}

std::vector<Run> list_runs(const std::string& root) {
  std::vector<Run> runs;
  std::error_code ec;
  const std::string abs_root = absolute_path(root);
  if (!fs::is_directory(abs_root, ec)) return runs;
  for (const auto& entry : fs::directory_iterator(abs_root, ec)) {
    if (!is_run_dir(entry)) continue;
    try {
      runs.push_back(load_run(entry.path().string()));
    } catch (const UserError&) {
      // A damaged run does not hide the others; `status RUN` names it.
    }
  }
  sort_runs(runs);
  return runs;
}

std::optional<long long> run_ended_at(const Run& run) {
  long long at = parse_utc_iso(run.created_at);
  for (const auto& a : run.attempts) {
    if (a.outcome == Outcome::Intent || a.outcome == Outcome::Unconfirmed) return std::nullopt;
    if (a.outcome == Outcome::Submitted) {
      if (!a.end) return std::nullopt;
      at = std::max(at, a.end->job.end_time.value_or(a.end->recorded_at));
    } else {
      at = std::max(at, parse_utc_iso(a.decided_at));
    }
  }
  return at;
}

namespace {

const char* const kIndexFile = ".index.json";

// What identifies one version of a ledger: a write replaces the file
// (write_file_atomic renames a new one in), so its inode changes with it.
std::string ledger_key(const std::string& run_dir) {
  struct stat st {};
  if (::stat((run_dir + "/ledger.json").c_str(), &st) != 0) return "";
  return fmt::format("{}:{}:{}.{:09}", st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

const char* const kViewsFile = ".index-views";

struct IndexEntry {
  std::string ledger;  // ledger_key of the ledger it was read from
  long long at = 0;    // run_ended_at
  std::string created_at;
};

// The index as read; empty when missing or damaged.
std::map<std::string, IndexEntry> read_index(const std::string& root) {
  std::map<std::string, IndexEntry> out;
  try {
    json doc = json::parse(read_file((fs::path(root) / kIndexFile).string(), 64 << 20));
    if (doc.value("format", 0) != 1) return out;
    for (auto& [id, e] : doc.at("ended").items())
      out[id] = IndexEntry{e.at("ledger").get<std::string>(), e.at("at").get<long long>(), e.value("created", "")};
  } catch (const std::exception&) {
    out.clear();  // rebuilt from the ledgers
  }
  return out;
}

// The views, beside the index so that a status that needs none reads none:
// a line with the ddpctl that wrote them (another version's words may
// differ: then none), then one line per run, "<id>\t<ledger key>\t<view>".
struct View {
  std::string ledger, text;
};
std::map<std::string, View> read_views(const std::string& root) {
  std::map<std::string, View> out;
  std::string text;
  try {
    text = read_file((fs::path(root) / kViewsFile).string(), 1ull << 30);
  } catch (const std::exception&) {
    return out;
  }
  size_t at = text.find('\n');
  if (at == std::string::npos || text.compare(0, at, "ddpctl " + ddpctl_version()) != 0) return out;
  for (++at; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) break;  // a line cut short is no view
    size_t t1 = text.find('\t', at), t2 = t1 == std::string::npos ? t1 : text.find('\t', t1 + 1);
    if (t2 != std::string::npos && t2 < end)
      out[text.substr(at, t1 - at)] = View{text.substr(t1 + 1, t2 - t1 - 1), text.substr(t2 + 1, end - t2 - 1)};
    at = end + 1;
  }
  return out;
}

// What a view kept of a run's ledger may be trusted for: its attempts as
// they were read (a digest, compared with the ledger as it is on disk).
std::string attempts_digest(const Run& run) {
  std::string d;
  for (const auto& a : run.attempts)
    d += fmt::format("{}|{}|{}|{}\n", a.token, outcome_name(a.outcome), a.job_id,
                     a.end ? state_name(a.end->job.state) : "-");
  return d;
}

}  // namespace

RecentRuns recent_runs(const std::string& root, long long since,
                       const std::function<bool(const std::string& dir)>& only, bool views) {
  RecentRuns out;
  std::error_code ec;
  // Absolute once, not once per run (load_run makes its folder absolute).
  const std::string abs_root = absolute_path(root);
  if (!fs::is_directory(abs_root, ec)) return out;
  std::optional<std::map<std::string, IndexEntry>> index;  // read when first needed
  std::map<std::string, View> kept = views ? read_views(abs_root) : std::map<std::string, View>{};
  for (const auto& entry : fs::directory_iterator(abs_root, ec)) {
    if (only && !only(entry.path().string())) continue;
    if (!index) index = read_index(abs_root);
    std::string id = entry.path().filename().string();
    if (auto it = index->find(id); it != index->end()) {
      auto view = kept.find(id);
      bool viewed = view != kept.end() && view->second.ledger == it->second.ledger;
      if (it->second.at < since || viewed) {
        std::string key = ledger_key(entry.path().string());
        if (!key.empty() && key == it->second.ledger) {
          if (it->second.at < since)
            ++out.older;
          else
            out.indexed.push_back({id, it->second.created_at, it->second.at, std::move(view->second.text)});
          continue;
        }
      }
    }
    if (!is_run_dir(entry)) continue;
    try {
      Run run = load_run(entry.path().string());
      if (auto at = run_ended_at(run); at && *at < since) {
        ++out.older;
        out.to_index.push_back(std::move(run));
        continue;
      }
      out.runs.push_back(std::move(run));
    } catch (const UserError&) {
      // A damaged run does not hide the others; `status RUN` names it.
    }
  }
  sort_runs(out.runs);
  return out;
}

void index_ended_runs(const std::string& root, const std::vector<const Run*>& runs,
                      const std::map<std::string, std::string>& views) {
  const fs::path abs_root = absolute_path(root);
  auto index = read_index(abs_root);
  auto kept = views.empty() ? std::map<std::string, View>{} : read_views(abs_root);
  bool changed = false;
  std::map<std::string, std::string> new_views;  // id -> view, for the ledger now indexed
  std::error_code ec;
  // Runs no longer there.
  for (auto it = index.begin(); it != index.end();)
    if (!fs::exists(abs_root / it->first / "ledger.json", ec)) {
      it = index.erase(it);
      changed = true;
    } else {
      ++it;
    }
  for (const Run* r : runs) {
    const Run& run = *r;
    if (!run_ended_at(run)) continue;  // only ended runs are kept
    if (fs::path(run.dir).parent_path() != abs_root) continue;
    std::string key = ledger_key(run.dir);
    if (key.empty()) continue;
    auto view = views.find(run.id);
    auto it = index.find(run.id);
    bool indexed = it != index.end() && it->second.ledger == key;
    bool viewed = view == views.end() || (kept.count(run.id) && kept[run.id].ledger == key);
    if (indexed && viewed) continue;
    // The ledger as it is now, between two looks at the same version of it:
    // never an end read from one version kept under another's key, nor a
    // view made from other attempts than the ledger's.
    try {
      Run now = load_run(run.dir);
      auto at = run_ended_at(now);
      if (!at || ledger_key(run.dir) != key) continue;
      if (!indexed) {
        index[run.id] = {key, *at, now.created_at};
        changed = true;
      }
      if (view != views.end() && attempts_digest(now) == attempts_digest(run)) new_views[run.id] = view->second;
    } catch (const std::exception&) {
    }
  }
  try {
    if (changed) {
      json ended = json::object();
      for (auto& [id, e] : index) ended[id] = {{"ledger", e.ledger}, {"at", e.at}, {"created", e.created_at}};
      write_file_atomic((abs_root / kIndexFile).string(), json{{"format", 1}, {"ended", std::move(ended)}}.dump() + "\n");
    }
    // The views file is rewritten when it gains one, or loses a run.
    if (new_views.empty() && !changed) return;
    if (views.empty()) kept = read_views(abs_root);
    std::string text = "ddpctl " + ddpctl_version() + "\n";
    for (const auto& [id, e] : index) {
      auto v = new_views.find(id);
      auto k = kept.find(id);
      if (v != new_views.end())
        text += id + "\t" + e.ledger + "\t" + v->second + "\n";
      else if (k != kept.end() && k->second.ledger == e.ledger)
        text += id + "\t" + e.ledger + "\t" + k->second.text + "\n";
    }
    write_file_atomic((abs_root / kViewsFile).string(), text);
  } catch (const std::exception&) {
    // A runs folder this user cannot write: the runs are read each time.
  }
}

Run find_run(const std::string& root, const std::string& query) {
  std::error_code ec;
  if (fs::exists(fs::path(query) / "run.json", ec)) return load_run(query);
  std::vector<Run> runs = list_runs(root);
  std::vector<const Run*> matches;
  for (const auto& r : runs)
    if (r.id == query) return r;
  // A run name: its latest run.
  for (auto it = runs.rbegin(); it != runs.rend(); ++it)
    if (it->name == query) return *it;
  // A job id, as status shows it in its JOB column: the run that made the job.
  if (is_decimal_number(query))
    for (const auto& r : runs)
      if (job_attempt(r, query)) return r;
  for (const auto& r : runs)
    if (r.id.rfind(query, 0) == 0) matches.push_back(&r);
  if (matches.empty()) {
    std::vector<std::string> ids;
    for (const auto& r : runs) ids.push_back(r.id);
    throw UserError(Location{printable(query)}, "",
                    fmt::format("no run with this name or id under {}{}", root, did_you_mean(query, ids)));
  }
  if (matches.size() > 1) {
    std::vector<std::string> ids;
    for (const auto* r : matches) ids.push_back(r->id);
    throw UserError(Location{printable(query)}, "", fmt::format("matches {} runs: {}", ids.size(), join(ids, ", ")));
  }
  return *matches.front();
}

}  // namespace ddpctl
