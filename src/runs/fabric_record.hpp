#pragma once
// The fabric check's record (agent/fabric_check.hpp): the all-reduce
// measured across the allocation before the attempt's first training step,
// <log base>.restart<N>.fabric.json. `job checked` and `job step-ended`
// exclude the nodes it names; status shows its figures and its verdict.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ddpctl {

enum class FabricLevel {
  Ok,    // at or above the warning level
  Warn,  // below the warning level, at or above the failure level
  Fail,  // below the failure level (or not measured within its time)
  Unmeasured,  // the measurement itself failed (the trainer could not run): no verdict
};
std::string fabric_level_name(FabricLevel l);  // "ok", "warn", "fail", "unmeasured"

// One measurement: the whole set (round 1) or a pair of nodes (round 2 on).
struct FabricTiming {
  int round = 1;
  std::vector<std::string> nodes;    // a pair's two nodes; the whole set's all
  std::optional<double> busbw_gbs;   // nullopt: not measured (it failed or ran past its time)
  double seconds = 0;                // one all-reduce's (the slowest rank's mean)
};

struct FabricRecord {
  std::vector<std::string> nodes;  // what was checked, the first rank 0's
  double expected_gbs = 0, warn_below = 0, fail_below = 0;
  long long bytes = 0;
  FabricLevel level = FabricLevel::Ok;
  std::vector<FabricTiming> measures;  // the whole set first, then the pairs round by round
  int rounds = 1;
  std::vector<std::string> bad_nodes;                            // slow with every partner
  std::vector<std::pair<std::string, std::string>> bad_links;    // slow together, each fine with another
  std::vector<std::string> exclude;   // left out: the bad nodes, and one end of each bad link
  std::string text;                   // the verdict in words, for status and the batch log
  std::string problem;                // why a measurement gave nothing (srun's words)
  double seconds = 0;                 // the check's whole time
};

nlohmann::json fabric_record_json(const FabricRecord& r);
std::optional<FabricRecord> parse_fabric_record(const std::string& text);
std::optional<FabricRecord> read_fabric_record(const std::string& log_base, int attempt);

}  // namespace ddpctl
