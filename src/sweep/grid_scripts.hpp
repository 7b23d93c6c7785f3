#pragma once
// A grid's scripts, rendered from the templates: every cell's whole job
// script (cells/<index>.sh, a run of its own), a raced grid's race scripts
// for its first cell, and each array's script; and what the sweep records
// of them (grid.json's cells). `ddpctl gen` of a grid writes them too.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "script/resolve.hpp"
#include "script/resolve_grid.hpp"
#include "runs/run_store.hpp"
#include "sweep/grid_arrays.hpp"

namespace ddpctl {

// What the sweep records, before anything is queued (its scripts went to
// the ScriptSink as they were rendered).
struct GridPlan {
  std::vector<GridArray> arrays;
  RunGrid grid;
  std::vector<std::string> checkpoint_folders;  // the cells' that ddpctl chose (set_checkpoint_folder)
};
// Takes each script (file in the run folder, text) as it is rendered, so
// that a grid's 100,000 scripts are never all in memory.
using ScriptSink = std::function<void(const std::string& file, const std::string& text)>;

// Renders every cell's script for the run `run_id` in `run_dir` (its cells'
// folders are <output_dir>/<run id>/<cell>), then each array's script, into
// `sink`. `gen` keeps the paths as the spec and -o wrote them (relative ones
// stay relative to the submit folder); a sweep makes them absolute.
GridPlan plan_grid(ResolvedGrid& g, const std::string& run_dir, const std::string& run_id,
                   const std::string& templates_dir, const ScriptSink& sink, bool absolute_paths = true);

// `ddpctl gen` of a grid: every cell's script (cells/<index>.sh) and each
// array's, written into `out_dir` (which stands for the run folder: the
// arrays exec the cells' scripts there); returns the paths, arrays first.
std::vector<std::pair<std::string, std::string>> render_grid_scripts(const std::string& spec,
                                                                     const std::vector<std::string>& sets,
                                                                     const std::string& out_dir,
                                                                     const std::string& templates_dir);
std::vector<std::string> write_grid_scripts(const std::string& spec, const std::vector<std::string>& sets,
                                            const std::string& out_dir, const std::string& templates_dir);

}  // namespace ddpctl
