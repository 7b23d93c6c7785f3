#include "runs/runs_index.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include "base/files.hpp"
#include "base/version.hpp"
#include "runs/ledger.hpp"
#include "runs/run_store.hpp"

namespace ddpctl {

namespace fs = std::filesystem;
using nlohmann::json;

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

}  // namespace ddpctl
