#pragma once
// `ddpctl report STUDY`: a study's trials (`ddpctl tune`; a study is an
// experiment of kind "study", explain/experiments.hpp) by parameter, as a
// grid's cells are (parameter_report.hpp): a row per trial with the values
// its `--set` gave, its job, state and final metrics (the metrics file's
// last epoch, else the spec's `metric:` patterns, as a cell's), and what it
// used (gpu_hours, or node_hours on CPUs). --best and --seed-key work as
// for a grid; the tables, CSV, JSON and --plot are a grid's.
#include <string>

#include "explain/experiments.hpp"
#include "explain/parameter_report.hpp"
#include "runs/output.hpp"
#include "slurm/context.hpp"

namespace ddpctl {

GridReport study_report(const Experiment& study, const std::string& root, SlurmClient& slurm,
                        const GridReportOptions& options, Output& out, long long now);

}  // namespace ddpctl
