#include "runs/run_store.hpp"

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <sstream>
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

namespace {

// A word as the shell reads `export NAME=WORD` that shell_quote wrote:
// '...' literal, \x escapes, the rest as is.
std::string unquoted(const std::string& word) {
  std::string out;
  bool single = false;
  for (size_t i = 0; i < word.size(); ++i) {
    char c = word[i];
    if (single) {
      if (c == '\'') single = false;
      else out += c;
    } else if (c == '\'') {
      single = true;
    } else if (c == '\\' && i + 1 < word.size()) {
      out += word[++i];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

namespace fs = std::filesystem;
using nlohmann::json;

bool is_run_dir(const fs::directory_entry& entry) {
  std::error_code ec;
  return entry.is_directory(ec) && fs::exists(entry.path() / "run.json", ec);
}

void sort_runs(std::vector<Run>& runs) {
  std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) {
    return std::tie(a.created_at, a.created_ns, a.id) < std::tie(b.created_at, b.created_ns, b.id);
  });
}

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

std::string new_run_id(const std::string& name, const std::string& created_at) {
  std::string stamp = created_at;
  stamp.erase(std::remove_if(stamp.begin(), stamp.end(), [](char c) { return c == '-' || c == ':'; }), stamp.end());
  return fmt::format("{}-{}-{}", name, stamp, new_token().substr(0, 6));
}

std::string identity_lock_path(const std::string& root, const std::string& identity) {
  return (fs::path(root) / ".locks" / (identity + ".lock")).string();
}

namespace {

// A shape as run.json keeps it; `run` gives what records before races of
// several specs kept only for the whole run.
RunShape shape_from_json(const json& s, const Run& run) {
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
  rs.max_requeues = s.value("max_restarts", 0);
  if (auto p = s.find("progress"); p != s.end() && p->is_object()) {
    ProgressSpec ps;
    ps.preset = p->value("preset", "");
    ps.pattern = p->value("pattern", "");
    ps.file = p->value("file", "rank0");
    if (auto e = p->find("epochs"); e != p->end() && e->is_number_integer()) ps.epochs = e->get<int>();
    ps.epoch_base = p->value("epoch_base", 1);
    rs.progress = ps;
  }
  rs.gpu_type = s.value("gpu_type", "");
  if (auto p = s.find("peak"); p != s.end() && p->is_object()) {
    PeakTflops peak;
    const json tflops = p->value("tflops", json::object());
    for (const auto& [k, v] : tflops.items()) {
      if (!v.is_number() || !(v.get<double>() > 0)) continue;
      if (k == "any")
        peak.any = v.get<double>();
      else
        peak.by_precision[k] = v.get<double>();
    }
    if (!peak.empty()) rs.peak = peak, rs.peak_from = p->value("from", "");
  }
  if (auto m = s.find("metric"); m != s.end() && m->is_object()) {
    MetricSpec ms;
    ms.patterns = m->value("patterns", std::vector<std::string>{});
    ms.file = m->value("file", "rank0");
    rs.metric = ms;
  }
  return rs;
}

// grid.json (save_grid) as read back; a json::exception when damaged.
RunGrid grid_from_json(const std::string& file) {
  json g = json::parse(read_file(file, 64 << 20));
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
  return grid;
}

}  // namespace

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
  run.created_ns = meta.value("created_ns", 0LL);
  run.cwd = meta.value("cwd", "");
  run.ddpctl_version = meta.value("ddpctl", "");
  run.output_dir = meta.value("output_dir", "");
  for (const auto& s : meta.value("shapes", json::array())) run.shapes.push_back(shape_from_json(s, run));
  run.attempts = ledger_attempts(ledger);
  if (fs::exists(run.dir + "/grid.json")) {
    try {
      run.grid = grid_from_json(run.dir + "/grid.json");
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

std::string run_checkpoint_folder(const Run& run) {
  if (run.shapes.empty()) return "";
  std::istringstream script(read_file(run.dir + "/" + run.shapes.front().script));
  const std::string prefix = "export DDPCTL_CHECKPOINT_DIR=";
  std::string line, folder;
  while (std::getline(script, line))
    if (line.rfind(prefix, 0) == 0) folder = unquoted(line.substr(prefix.size()));
  if (folder.empty()) return "";
  if (folder[0] != '/') folder = (fs::path(run.cwd) / folder).lexically_normal().string();
  return folder;
}

}  // namespace ddpctl
