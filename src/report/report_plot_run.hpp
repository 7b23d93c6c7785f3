#pragma once
// `report --plot`: the rows drawn through gnuplot, from the data files and
// scripts explain/report_plot.hpp writes (docs/report.md).
#include <string>
#include <vector>

#include "base/process.hpp"
#include "explain/report.hpp"

namespace ddpctl {

// Draws the rows into `path` (.svg or .png) with gnuplot, run through
// `runner`, and each job's usage over time beside it (report_plot.hpp's usage_plot_path);
// returns what to tell the user: each file written, each picture left out and why.
std::vector<std::string> plot_report(const std::vector<ReportRow>& rows, const std::string& path, CommandRunner& runner);

}  // namespace ddpctl
