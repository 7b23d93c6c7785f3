#pragma once
// Final metrics of any program: a run spec's `metric:` names regular
// expressions (RE2, regex.hpp) with named groups, each group a metric, and
// the LAST match of each group in the job's rank-0 log is the metric's value
// (`metric: 'val_loss=(?P<val_loss>[0-9.eE+-]+)'`). `report` of a grid's
// sweep shows them per cell (report_grid.hpp); the bundled trainer's metrics
// file needs none.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "run_spec.hpp"

namespace ddpctl {

// Why a `metric:` pattern cannot be used (it does not compile, or names no
// group), in the engine's own words; nullopt when it can.
std::optional<std::string> metric_pattern_problem(const std::string& pattern);

// The metrics `spec`'s patterns name, in the order they are written.
std::vector<std::string> metric_names(const MetricSpec& spec);

// The last value of each named group over `lines`, in order: a later line
// (and a later match on one line) wins; a group whose text is no number is
// skipped there. Metrics never matched are absent.
std::map<std::string, double> read_metric_values(const MetricSpec& spec, const std::vector<std::string>& lines);

}  // namespace ddpctl
