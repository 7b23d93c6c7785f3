#include "status/events_stream.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <ctime>
#include <iostream>
#include <tuple>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <set>
#include <sys/stat.h>

#include "base/diagnostics.hpp"
#include "base/json_document.hpp"
#include "base/text.hpp"
#include "explain/experiments.hpp"
#include "runs/events.hpp"
#include "runs/run_store.hpp"
#include "status/status.hpp"

namespace ddpctl {

namespace {

namespace fs = std::filesystem;

// The stream's own types, beside the runs' (event_types()).
const std::vector<std::string> kStreamTypes = {"state", "heartbeat", "gone", "skipped"};

long long file_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<long long>(st.st_size) : 0;
}

std::string iso_now(double t) {
  std::time_t s = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::set<std::string> checked_types(const std::vector<std::string>& given) {
  std::set<std::string> out;
  for (const auto& list : given)
    for (const auto& t : split(list, ',')) {
      if (t.empty()) continue;
      if (!parse_event_type(t) && std::find(kStreamTypes.begin(), kStreamTypes.end(), t) == kStreamTypes.end()) {
        std::vector<std::string> names = kStreamTypes;
        for (EventType e : event_types()) names.push_back(event_type_name(e));
        throw UserError(Location{"--types"}, "",
                        fmt::format("{}: no such event type{}; the types: {}", printable(t), did_you_mean(t, names),
                                    join(names, ", ")));
      }
      out.insert(t);
    }
  return out;
}

struct Followed {
  std::string id, dir;
  EventPosition at;
  bool ended = false;     // its run_ended was read
  bool race = false;      // a race across sites' run here: no status rows
};

class Stream {
 public:
  Stream(const EventsRequest& req, SlurmClient& slurm, Clock& clock, std::ostream& out)
      : req_(req), slurm_(slurm), clock_(clock), out_(out), types_(checked_types(req.types)) {}

  void run() {
    find_runs();
    const bool resumed = !req_.since.empty() && req_.since != "start";
    if (resumed) resume(decode_cursor(req_.since));
    if (req_.follow && req_.since.empty()) {
      // The state now, then what happens from here.
      for (auto& [id, f] : runs_) f.at = end_of(f);
      say_states(ids());
    }
    const double began = clock_.monotonic();
    double last_line = began, next_status = began;
    for (;;) {
      if (!drain()) return;  // the reader left
      if (!req_.follow) return;
      // Every run ended, and all it said read (its run_ended too).
      if (!runs_.empty() && !req_.all && std::all_of(runs_.begin(), runs_.end(), [](const auto& r) {
            const Followed& f = r.second;
            return f.ended || (event_written_once(f.dir, "run_ended") && f.at.offset >= file_size(events_path(f.dir)));
          }))
        return;
      const double now = clock_.monotonic();
      if (printed_) last_line = now, printed_ = false;
      if (now - last_line >= req_.heartbeat_s) {
        if (!emit({{"type", "heartbeat"}})) return;
        last_line = now, printed_ = false;
      }
      if (req_.max_s > 0 && now - began >= req_.max_s) return;
      if (now >= next_status) {
        ask_ends();
        if (req_.all) find_runs();
        next_status = now + req_.status_s;
      }
      clock_.sleep(req_.poll_s);
    }
  }

 private:
  std::vector<std::string> ids() const {
    std::vector<std::string> v;
    for (const auto& [id, f] : runs_) v.push_back(id);
    return v;
  }

  EventPosition end_of(const Followed& f) const {
    return {last_event_seq(f.dir), file_size(events_path(f.dir)), event_log_origin(f.dir)};
  }

  void find_runs() {
    if (req_.all) {
      std::error_code ec;
      for (const auto& e : fs::directory_iterator(req_.runs_root, ec)) {
        const std::string id = e.path().filename().string();
        if (!e.is_directory(ec) || runs_.count(id) || !fs::exists(events_path(e.path().string()), ec)) continue;
        runs_[id] = Followed{id, e.path().string(), {}, false};
      }
      return;
    }
    for (const auto& dir : req_.race_dirs) {
      const std::string id = fs::path(dir).filename().string();
      runs_[id] = Followed{id, dir, {}, false, true};
    }
    if (req_.targets.empty()) return;
    std::vector<Run> runs;
    std::vector<JobRef> refs = resolve_targets(req_.targets, req_.runs_root, runs);
    for (const auto& r : refs)
      if (!r.run)
        throw UserError(Location{r.job_id}, "", "is a job ddpctl did not submit here: it has no events (name its run)");
    for (const auto& run : runs) runs_.emplace(run.id, Followed{run.id, run.dir, {}, false});
  }

  // --since: each run from the cursor's place; a place the log no longer
  // has is `gone` (and the run's state again); one ahead of it, or a
  // cursor of runs not followed, is an error.
  void resume(const EventCursor& c) {
    if (!req_.all)
      for (const auto& [id, p] : c)
        if (!runs_.count(id))
          throw UserError(Location{"--since"}, "",
                          fmt::format("is a cursor of run {}, not of {}: a cursor resumes the stream it came from",
                                      printable(id), join(ids(), ", ")));
    std::vector<std::string> gone;
    for (auto& [id, f] : runs_) {
      auto it = c.find(id);
      if (it == c.end()) continue;  // --all: a run that appeared since: all of it
      const EventPosition want = it->second;
      const long long origin = event_log_origin(f.dir);
      const long long last = last_event_seq(f.dir);
      std::optional<long long> at;
      if (want.seq == 0) at = 0;
      else if (want.origin == origin) at = offset_after(f.dir, want.seq);
      if (at) {
        f.at = {want.seq, *at, origin};
      } else if (want.origin == origin && want.seq > last) {
        throw UserError(Location{"--since"}, "",
                        fmt::format("is ahead of run {}'s events (event {} of {}): a cursor of another copy of the "
                                    "run; `--since start` reads them all",
                                    id, want.seq, last));
      } else {
        f.at = end_of(f);
        gone.push_back(id);
      }
    }
    for (const auto& id : gone)
      emit({{"type", "gone"}, {"run", id},
            {"reason", "the cursor's place is no longer in the run's log (replaced or cut): its state follows, then "
                       "what happens from now"}});
    if (!gone.empty()) say_states(gone);
  }

  // Each run's state: its status rows, as `status RUN --json` has them.
  void say_states(const std::vector<std::string>& which) {
    if (which.empty()) return;
    StatusRequest sr;
    sr.runs_root = req_.runs_root;
    sr.json = true;
    for (const auto& id : which)
      if (!runs_.at(id).race) sr.targets.push_back(runs_.at(id).dir);
    StatusReport report;
    if (!sr.targets.empty()) report = collect_status(sr, slurm_, static_cast<long long>(clock_.wall()));
    for (const auto& id : which) {
      nlohmann::json rows = nlohmann::json::array();
      for (const auto& r : report.rows)
        if (r.run == id && !r.json.is_null()) rows.push_back(r.json);
      emit({{"type", "state"}, {"run", id}, {"rows", rows}});
    }
    // Status wrote the ends it found: read from where the state was taken.
  }

  // The ends of the runs' jobs are Slurm's to say: status asks and writes
  // them as events (status_events.hpp), read at the next drain.
  void ask_ends() {
    StatusRequest sr;
    sr.runs_root = req_.runs_root;
    for (const auto& [id, f] : runs_)
      if (!f.ended && !f.race) sr.targets.push_back(f.dir);
    if (sr.targets.empty()) return;
    try {
      collect_status(sr, slurm_, static_cast<long long>(clock_.wall()));
    } catch (const std::exception& e) {
      // Said once a while; the events go on.
      std::cerr << "ddpctl: events: warning: Slurm could not be asked for the jobs' ends (" << e.what() << ")\n";
    }
  }

  // Every run's new events, merged in time order; false when the reader left.
  bool drain() {
    for (;;) {
      struct Item {
        double t;
        std::string run;
        long long seq, end;
        nlohmann::json ev;
      };
      std::vector<Item> batch;
      std::map<std::string, long long> read_to;
      bool more = false;
      for (auto& [id, f] : runs_) {
        if (file_size(events_path(f.dir)) <= f.at.offset) continue;
        EventsRead r = read_events(f.dir, f.at.offset, 1 << 20);
        for (const auto& why : r.skipped) {
          std::cerr << "ddpctl: events: warning: run " << id << ": " << why << '\n';
          batch.push_back({-1, id, f.at.seq, f.at.offset, {{"type", "skipped"}, {"run", id}, {"reason", why}}});
        }
        for (size_t i = 0; i < r.events.size(); ++i)
          batch.push_back({r.events[i].value("t", 0.0), id, r.events[i]["seq"].get<long long>(), r.ends[i], r.events[i]});
        if (r.next_offset - f.at.offset >= (1 << 20) - (64 << 10)) more = true;
        read_to[id] = r.next_offset;
      }
      // Past what was read, skipped lines included, once the batch is out.
      auto advance = [&] {
        for (const auto& [id, end] : read_to) runs_.at(id).at.offset = std::max(runs_.at(id).at.offset, end);
      };
      if (batch.empty()) {
        advance();
        return true;
      }
      std::stable_sort(batch.begin(), batch.end(), [](const Item& a, const Item& b) {
        return std::tie(a.t, a.run, a.seq) < std::tie(b.t, b.run, b.seq);
      });
      for (auto& item : batch) {
        Followed& f = runs_.at(item.run);
        if (item.ev.value("type", "") != "skipped") {
          if (item.seq <= f.at.seq) continue;  // a duplicate seq (a hand-edited log): once
          if (f.at.origin == 0) f.at.origin = std::llround(item.ev.value("t", 0.0) * 1000);
          f.at = {item.seq, item.end, f.at.origin};
          if (item.ev.value("type", "") == "run_ended") f.ended = true;
        }
        if (!emit(item.ev)) return false;
      }
      advance();
      if (!more) return true;
    }
  }

  bool emit(nlohmann::json ev) {
    const std::string type = ev.value("type", "");
    if (!types_.empty() && !types_.count(type) && type != "heartbeat" && type != "gone") return true;
    printed_ = true;
    if (!ev.contains("schema")) {
      const double t = clock_.wall();
      nlohmann::json head = {{"schema", json_schema_id("event")}, {"time", iso_now(t)}, {"t", t}};
      head.update(ev);
      ev = head;
    }
    EventCursor c;
    for (const auto& [id, f] : runs_) c[id] = f.at;
    ev["cursor"] = encode_cursor(c);
    out_ << ev.dump() << '\n';
    out_.flush();
    return static_cast<bool>(out_);
  }

  const EventsRequest& req_;
  SlurmClient& slurm_;
  Clock& clock_;
  std::ostream& out_;
  std::set<std::string> types_;
  std::map<std::string, Followed> runs_;
  bool printed_ = false;
};

}  // namespace

void stream_events(const EventsRequest& req, SlurmClient& slurm, Clock& clock, std::ostream& out) {
  if (req.targets.empty() && req.race_dirs.empty() && !req.all) throw UserError(Location{"RUN"}, "", "name a run (or sweep), or --all");
  if (!req.targets.empty() && req.all) throw UserError(Location{"--all"}, "", "goes without RUN: every run");
  Stream(req, slurm, clock, out).run();
}

}  // namespace ddpctl
