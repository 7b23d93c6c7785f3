#pragma once
// Plots of a report (report.hpp): the data files and gnuplot scripts of the
// scaling plot and of each job's usage. Running gnuplot is the workflow's
// (plot_report).
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "explain/report.hpp"
#include "runs/usage.hpp"

namespace ddpctl {

// A string in gnuplot's single quotes ('' for each ' in it).
std::string gnuplot_quote(const std::string& s);

// Where a job's usage picture goes beside the plot the user named:
// out.png -> out.<shape>-<job id>.usage.png
std::string usage_plot_path(const std::string& plot, const ReportRow& row);

// A gnuplot script that draws speedup vs ranks (with the ideal line) and
// efficiency per shape into `out` (.svg or .png), reading `data_file`, which
// report_plot_data() fills.
std::string report_plot_data(const std::vector<ReportRow>& rows);
std::string report_gnuplot(const std::vector<ReportRow>& rows, const std::string& data_file, const std::string& out,
                           const std::string& terminal);

// A job's usage over time (report --plot): per node, the data lines
// "minutes cpu_cores rss_gib gpu_util_pct gpu_mem_gib" ("?" where a sample
// has no GPUs), from the first sample of the job; and the gnuplot script
// drawing utilisation and memory, a line per node.
std::map<std::string, std::string> usage_plot_data(const std::map<std::string, std::vector<UsageSample>>& samples);
std::string usage_gnuplot(const std::string& title, const std::vector<std::pair<std::string, std::string>>& node_files,
                          bool gpus, const std::string& out, const std::string& terminal);

}  // namespace ddpctl
