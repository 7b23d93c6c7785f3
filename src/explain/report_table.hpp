#pragma once
// The scaling report's rows (report.hpp) as printed: a table for a terminal
// with its notes (mixed code or environments, failures, restarts, what each
// column is from), Markdown, CSV and JSON.
#include <string>
#include <vector>

#include "explain/report.hpp"

namespace ddpctl {

std::string report_table(const std::vector<ReportRow>& rows);     // for a terminal
std::string report_markdown(const std::vector<ReportRow>& rows);  // the seeds' table
std::string report_csv(const std::vector<ReportRow>& rows);
std::string report_json(const std::vector<ReportRow>& rows);

}  // namespace ddpctl
