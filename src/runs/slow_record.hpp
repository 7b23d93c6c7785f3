#pragma once
// A straggler's record (docs/running.md "Stragglers"): what the watchdog's
// straggler watch (agent/straggler.hpp) keeps of the ranks' relative speeds
// in <log base>.slow.json, the latest attempt's, which status, report and
// the requeue read; and its words. A rank's relative speed is the
// least-working rank's work over a recent span divided by its own (1 for the
// fastest); below kSlowBelow for `slow_after` it is named.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

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

struct RankSpeed {
  RankId id;
  double speed = 1;  // the least-working rank's work fraction / this rank's
  double busy = 0;   // its work fraction of the span (1: worked all of it)
};
struct SlowRank {
  RankId id;
  double speed = 1;   // mean over the readings since `since`
  double since = 0;   // the first reading below kSlowBelow of this run
  std::optional<double> until;  // when it was above again (a rank that recovered)
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

// The nodes attempt `attempt`'s record leaves out of the next one (with
// exclude on), and in `why` the slow ranks; none without a record.
std::vector<std::string> recorded_slow_nodes(const std::string& log_base, int attempt, std::string* why);

}  // namespace ddpctl
