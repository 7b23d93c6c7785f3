#pragma once
// A grid's report by parameter (parameter_report.hpp) as printed: a table
// for a terminal with the best line and notes, Markdown, CSV and JSON
// (docs/report.md). A row per cell, or per seed group with mean ± std.
#include <string>

#include "explain/parameter_report.hpp"

namespace ddpctl {

std::string grid_report_table(const GridReport& r);
std::string grid_report_markdown(const GridReport& r);
std::string grid_report_csv(const GridReport& r);
std::string grid_report_json(const GridReport& r);

}  // namespace ddpctl
