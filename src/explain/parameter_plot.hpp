#pragma once
// The plot of a grid's report by parameter (parameter_report.hpp, `report
// --plot`): its gnuplot data and script. Running gnuplot is the workflow's
// (plot_grid_report).
#include <string>

#include "explain/parameter_report.hpp"

namespace ddpctl {

// A plot of `metric` against the key `x` (an index into r.keys), one line
// per combination of the other keys (the seed's averaged, with its std as
// error bars): the data (gnuplot blocks, one per line) and the script.
struct GridPlot {
  std::string data, script;
};
GridPlot grid_plot(const GridReport& r, const std::string& metric, size_t x, const std::string& data_file,
                   const std::string& out, const std::string& terminal);

}  // namespace ddpctl
