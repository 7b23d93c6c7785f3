#pragma once
// A grid's sweep whose cells vary the shape, as the tests of its scaling
// report build it (test_report_grid_scaling.cpp, test_report_grid_scaling_rows.cpp):
// the run's record, sacct's line of a task, a task's metrics file.
#include <fmt/format.h>
#include <string>
#include <utility>
#include <vector>

#include "base/files.hpp"
#include "runs/job_files.hpp"
#include "runs/run_store.hpp"

namespace ddpctl::test {

struct CellShape {
  std::string label;
  int nodes, ranks_per_node;
};

// A grid's sweep whose cell i ran alone in array `first_array + i` (a
// grid of shapes: one array per shape) on shape `shapes[i % shapes.size()]`.
inline Run scaling_run(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& keys,
                const std::vector<std::vector<std::string>>& cell_values, const std::vector<CellShape>& shapes,
                int first_array) {
  Run run;
  run.id = "local-sweep-20261126";
  run.dir = dir;
  for (const auto& s : shapes) {
    RunShape r;
    r.label = s.label;
    r.job_name = "local-sweep-" + s.label;
    r.output_dir = dir;
    r.nodes = s.nodes;
    r.ranks_per_node = s.ranks_per_node;
    run.shapes.push_back(r);
  }
  RunGrid g;
  g.keys = keys;
  g.max_parallel = 1;
  for (size_t i = 0; i < cell_values.size(); ++i) {
    RunCell c;
    c.index = static_cast<int>(i);
    std::vector<std::string> parts;
    for (size_t k = 0; k < keys.size(); ++k) {
      c.values.emplace_back(keys[k].first, cell_values[i][k]);
      parts.push_back(keys[k].second + "=" + cell_values[i][k]);
    }
    c.name = fmt::format("{}", fmt::join(parts, ","));
    c.shape = shapes[i % shapes.size()].label;
    g.cells.push_back(c);
    Attempt a;
    a.shape = c.shape;
    a.job_id = std::to_string(first_array + static_cast<int>(i));
    a.array = fmt::format("{}%1", i);
    a.outcome = Outcome::Submitted;
    run.attempts.push_back(a);
  }
  run.grid = g;
  return run;
}

// sacct's line of the one task `index` of array `array` (its own job id is
// the array's: the last task of an array carries it), as 24.11 printed the
// captured array's, with this shape's node count and times.
inline std::string sacct_line(int array, int index, const std::string& state, int nodes, const std::string& start,
                       const std::string& end, const std::string& exit = "0:0") {
  std::string tres = fmt::format("billing={0},cpu={0},mem=1G,node={1}", nodes, nodes);
  return fmt::format("{0}_{1}|local-sweep|ddpctl:tok{0}|{2}|None|cpu|root|g[1-{3}]|2026-11-26T07:02:22|{4}|{5}|10|{3}|"
                     "{6}|{6}|{7}|/tmp/ddpctl-capture-array.2ePYYl|{0}\n",
                     array, index, state, nodes, start, end, tres, exit);
}

// The bundled trainer's metrics file of a task: three epochs, the first
// slower (start-up), then `img_per_s`.
inline void write_trainer_metrics(const Run& run, const std::string& label, const std::string& job_id, double img_per_s,
                           int world) {
  std::string base = job_files::log_base(run.dir, "local-sweep-" + label, job_id);
  std::string text;
  for (int e = 1; e <= 3; ++e)
    text += fmt::format("{{\"epoch\": {0}, \"epochs\": 3, \"train_loss\": {1}, \"train_acc\": 0.3, \"val_loss\": {1}, "
                        "\"val_acc\": 0.25, \"img_per_s\": {2}, \"epoch_s\": 4.0, \"world_size\": {3}, "
                        "\"peak_mem_mib\": [{4}], \"rank0_mem_mib\": {{\"peak\": 300, \"avg\": 250, \"mode\": 260}}, "
                        "\"mem_kind\": \"rss\", \"rendezvous_s\": 0.5, \"first_step_s\": 1.5, "
                        "\"time\": {5}}}\n",
                        e, 2.5 - 0.5 * e, e == 1 ? img_per_s / 2 : img_per_s + (e == 2 ? -1 : 1), world,
                        fmt::format("{}", fmt::join(std::vector<int>(static_cast<size_t>(world), 310), ", ")),
                        1795300000 + 4 * e);
  write_file_atomic(job_files::metrics(base), text);
}

inline const std::vector<CellShape> kShapes = {{"1x1", 1, 1}, {"1x2", 1, 2}, {"2x1", 2, 1}};
inline const std::vector<std::pair<std::string, std::string>> kShapeKeys = {{"nodes", "nodes"},
                                                                       {"procs_per_node", "procs_per_node"}};

}  // namespace ddpctl::test
