#pragma once
// Slow, not hung: a rank that keeps the others waiting (docs/running.md,
// "Stragglers"). In synchronous data-parallel training every rank takes the
// same wall time per step, the slowest rank's, so step times or progress
// lines cannot tell the ranks apart. What can is how long each rank WORKS:
// the fast ones finish early and wait for the slow one in the collective.
// Each rank's relative speed is the least-working rank's work over a recent
// span divided by its own (1 for the fastest, 0.5 for one that needs twice
// as long); a rank below 0.7 for `slow_after` is named, and with
// `watchdog.exclude_slow` its node is left out of the job's next attempt.
//
// The work comes from the bundled trainer where it says it (each rank's
// time loading its batches and running their forward passes, in the
// progress file), else from the usage samples (each rank's CPU time used or
// waited for: a rank starved of CPU by a quota or by a neighbour waits for
// it, and a rank waiting for its peers sleeps). The decisions here are pure
// (time in, verdict out); StragglerMonitor reads the files and keeps the
// record, <log base>.slow.json, which status, report and the requeue read.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runs/usage.hpp"

namespace ddpctl {

// Below this relative speed a rank is slow.
inline constexpr double kSlowBelow = 0.7;

enum class SpeedBasis { TrainerWork, CpuDemand };
std::string speed_basis_name(SpeedBasis b);  // "trainer", "cpu" (the record's)
std::string speed_basis_text(SpeedBasis b);  // what a message says it measured
std::optional<SpeedBasis> parse_speed_basis(const std::string& s);

// One rank as the messages name it: "rank 5 (g3)", or "task 1 (g2)" when
// only srun's task number is known.
struct RankId {
  int task = 0;
  std::optional<int> rank;
  std::string node;
  int key() const { return rank.value_or(task); }
};

// A rank's cumulative work: seconds it worked, over `wall_s` seconds of wall
// time, both counted from any fixed point (a counter that goes down started
// again).
struct RankCounter {
  RankId id;
  double work_s = 0, wall_s = 0;
};

// A rank's work over one recent span: work_s of span_s seconds.
struct RankWork {
  RankId id;
  double work_s = 0, span_s = 0;
};

// The counters of every rank at successive moments; the work over the last
// `window_s` (the newest counters against the latest ones at least that
// old), once there is such a span. Any counter going down (a program that
// started again) starts the history again.
class WorkWindow {
 public:
  explicit WorkWindow(double window_s) : window_(window_s) {}
  std::optional<std::vector<RankWork>> push(double now, const std::vector<RankCounter>& counters);
  void clear() { history_.clear(); }

 private:
  double window_;
  std::vector<std::pair<double, std::map<int, RankCounter>>> history_;
};

struct RankSpeed {
  RankId id;
  double speed = 1;  // the least-working rank's work fraction / this rank's
  double busy = 0;   // its work fraction of the span (1: worked all of it)
};
// Relative speeds of the ranks that worked at all; empty for fewer than two.
std::vector<RankSpeed> relative_speeds(const std::vector<RankWork>& work);

struct SlowRank {
  RankId id;
  double speed = 1;   // mean over the readings since `since`
  double since = 0;   // the first reading below kSlowBelow of this run
  std::optional<double> until;  // when it was above again (a rank that recovered)
};

struct StragglerVerdict {
  std::vector<RankSpeed> speeds;  // this reading's (empty: no reading)
  std::vector<SlowRank> named;    // slow for at least slow_after, now
  std::string none_because;       // when ranks are below but none is named for that: why
  bool changed = false;           // a rank was named, or recovered, at this reading
};

// Decides, reading after reading, which ranks are slow: below kSlowBelow at
// every reading for `slow_after_s`. A reading where more than half of the
// ranks are below names none (then the fast ones are the odd ones out), and
// with CpuDemand a rank counts as below only while it wanted a CPU at least
// half of the span (a rank mostly idle keeps nobody waiting).
class StragglerWatch {
 public:
  explicit StragglerWatch(double slow_after_s) : slow_after_(slow_after_s) {}
  StragglerVerdict observe(double now, SpeedBasis basis, const std::vector<RankWork>& work);
  // Ranks named earlier that are above again.
  const std::vector<SlowRank>& recovered() const { return recovered_; }
  void reset();

 private:
  struct Run {
    RankId id;
    double since = 0, speed_sum = 0;
    int readings = 0;
    bool named = false;
  };
  double slow_after_;
  std::map<int, Run> runs_;
  std::vector<SlowRank> recovered_;
};

// The bundled trainer's per-rank work in its progress file
// ("rank_work_s": [seconds of rank 0, 1, ...]); nullopt without it.
std::optional<std::vector<double>> progress_rank_work(const std::string& progress_json);

// Each rank's CPU time used or waited for (cpu_pct + wait_pct of the samples),
// summed sample after sample, per node. Only ranks with a RANK when any
// sample has one (a launcher's own process is no rank).
class SampleWork {
 public:
  // The new samples of each node (those after the last seen); the counters.
  std::vector<RankCounter> add(const std::map<std::string, std::vector<UsageSample>>& samples);

 private:
  std::map<std::string, double> last_t_;
  std::map<std::pair<std::string, int>, RankCounter> counters_;  // (node, rank or -1 - task)
};

// The record the watchdog keeps: <log base>.slow.json (the latest attempt's).
struct SlowRecord {
  int attempt = 0;
  std::string basis;  // speed_basis_name
  double slow_after_s = 0, updated = 0;
  std::vector<RankSpeed> speeds;  // the latest reading
  std::vector<SlowRank> slow;     // named now
  std::vector<SlowRank> recovered;
  bool exclude = false;                 // watchdog.exclude_slow
  std::vector<std::string> exclude_nodes;  // what the next requeue leaves out
  std::string exclude_note;             // why named ranks' nodes are not excluded
};
nlohmann::json slow_record_json(const SlowRecord& r);
std::optional<SlowRecord> read_slow_record(const std::string& log_base);

// "rank 1 (g2) at 0.25× the others for 3m10s (the trainer's forward passes)";
// `now` for how long. Empty when no rank is slow now.
std::string describe_slow(const SlowRecord& r, double now);
// For an ended job (report): the ranks slow at its end, and those that were.
std::string describe_slow_history(const SlowRecord& r);

// The nodes of the named ranks, unless that is every node of the job (then
// the ranks, not the nodes, are slower; `note` says so).
std::vector<std::string> slow_nodes_to_exclude(const std::vector<SlowRank>& named, const std::vector<std::string>& nodes,
                                               std::string* note);

// The nodes attempt `attempt`'s record leaves out of the next one (with
// exclude on), and in `why` the slow ranks; none without a record.
std::vector<std::string> recorded_slow_nodes(const std::string& log_base, int attempt, std::string* why);

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

 private:
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
};

// The window the speeds are read over: a fifth of slow_after, at least four
// samples and 10 s.
double straggler_window(double slow_after_s, double interval_s);

}  // namespace ddpctl
