#pragma once
// The watchdog's straggler watch as it runs in the job (docs/running.md,
// "Stragglers"): every look it reads the ranks' work (rank_work.hpp), the
// bundled trainer's where it says it, else the usage samples; decides
// (straggler_watch.hpp); and keeps the record, <log base>.slow.json
// (runs/slow_record.hpp). With `watchdog.exclude_slow` a named rank's node
// is left out of the job's next attempt (slow_nodes_to_exclude).
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/job_events.hpp"
#include "agent/rank_work.hpp"
#include "agent/straggler_watch.hpp"
#include "runs/slow_record.hpp"

namespace ddpctl {

// The nodes of the named ranks, unless that is every node of the job (then
// the ranks, not the nodes, are slower; `note` says so).
std::vector<std::string> slow_nodes_to_exclude(const std::vector<SlowRank>& named, const std::vector<std::string>& nodes,
                                               std::string* note);

// What the watchdog runs every look: reads the progress file (the trainer's
// work) or else the samples, decides, and keeps the record.
struct StragglerOptions {
  std::string log_base;
  int attempt = 0;
  std::vector<std::string> nodes;
  int tasks = 1, tasks_per_node = 1;
  bool per_gpu = false;
  double interval_s = 5, slow_after_s = 300;
  bool exclude = false;
};
class StragglerMonitor {
 public:
  StragglerMonitor(StragglerOptions o, double started_at);
  void tick(double now);
  const SlowRecord& record() const { return record_; }
  // The nodes the next requeue leaves out (empty without exclude).
  std::vector<std::string> exclusion() const { return record_.exclude ? record_.exclude_nodes : std::vector<std::string>{}; }
  // Each rank named slow becomes a `straggler` event of the run (once a rank).
  void events_to(JobEventSource events) { events_ = std::move(events); }

 private:
  void say_named(double now);
  void save();
  StragglerOptions o_;
  double started_at_;
  WorkWindow window_;
  StragglerWatch watch_;
  SampleWork samples_;
  std::optional<SpeedBasis> basis_;
  double progress_mtime_ = 0, saved_at_ = 0;
  bool have_reading_ = false;
  SlowRecord record_;
  JobEventSource events_;
  std::set<int> said_;  // the ranks said slow
};

// The window the speeds are read over: a fifth of slow_after, at least four
// samples and 10 s.
double straggler_window(double slow_after_s, double interval_s);

}  // namespace ddpctl
