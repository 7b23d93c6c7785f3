#pragma once
// Slow, not hung: a rank that keeps the others waiting (docs/running.md,
// "Stragglers"). In synchronous data-parallel training every rank takes the
// same wall time per step, the slowest rank's, so step times or progress
// lines cannot tell the ranks apart. What can is how long each rank WORKS:
// the fast ones finish early and wait for the slow one in the collective.
// Each rank's relative speed is the least-working rank's work over a recent
// span divided by its own (1 for the fastest, 0.5 for one that needs twice
// as long); a rank below 0.7 for `slow_after` is named. The decisions here
// are pure (time in, verdict out); the work they read: rank_work.hpp; the
// loop that reads it and keeps the record (runs/slow_record.hpp):
// straggler.hpp.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runs/slow_record.hpp"

namespace ddpctl {

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

// Relative speeds of the ranks that worked at all; empty for fewer than two.
std::vector<RankSpeed> relative_speeds(const std::vector<RankWork>& work);

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

}  // namespace ddpctl
