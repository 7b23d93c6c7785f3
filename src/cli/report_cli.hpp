#pragma once
// What `report` and `plan` share: the report rows of runs and experiments.
#include <string>
#include <vector>

#include "report.hpp"

namespace ddpctl::cli {

// Rows for each run the targets name (an experiment names all of its runs),
// with scaling computed; throws when none has metrics yet.
std::vector<ReportRow> collect_report(const std::vector<std::string>& targets, const std::string& root);

}  // namespace ddpctl::cli
