#pragma once
// Final metrics of any program: a run spec's `metric:` names regular
// expressions (RE2, regex.hpp) with named groups, each group a metric, and
// the LAST match of each group in the job's rank-0 log is the metric's value
// (`metric: 'val_loss=(?P<val_loss>[0-9.eE+-]+)'`). `report` of a grid's
// sweep shows them per cell (report/report_grid_collect.hpp); the bundled trainer's metrics
// file needs none.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "spec/run_spec.hpp"

namespace ddpctl {

// Why a `metric:` pattern cannot be used (it does not compile, names no
// group, or can match an empty text), in the engine's own words; nullopt
// when it can.
std::optional<std::string> metric_pattern_problem(const std::string& pattern);

// The metrics `spec`'s patterns name, in the order they are written.
std::vector<std::string> metric_names(const MetricSpec& spec);

// The last value of each named group over `lines`, in order: a later line
// wins, and on a line its last match (found in one pass over the line,
// regex.hpp's last_match_pattern: linear in its length); where a group's
// text in that match is no number, the line gives it none. Metrics never
// matched are absent.
std::map<std::string, double> read_metric_values(const MetricSpec& spec, const std::vector<std::string>& lines);

}  // namespace ddpctl
