#include "sweep/grid_scripts.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <map>

#include "base/files.hpp"
#include "base/paths.hpp"
#include "base/shell.hpp"
#include "explain/race.hpp"
#include "script/resolve_grid.hpp"
#include "script/render.hpp"
#include "script/script_env.hpp"
#include "spec/grid_cell.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

namespace {

std::string cell_folder(const ResolvedRun& r, const std::string& run_id, const GridCell& cell, bool absolute_paths) {
  std::string dir = (fs::path(r.spec.output_dir) / run_id / cell.dir_name).lexically_normal().string();
  return absolute_paths ? absolute_path(dir) : dir;
}

// A table grid (resolve_grid.hpp): one script of every cell, and the table of
// their variables, a line each (cells/cell.env).
GridPlan plan_table_grid(ResolvedGrid& g, const std::string& run_dir, const std::string& run_id,
                         const std::string& templates_dir, const ScriptSink& sink, bool absolute_paths) {
  GridPlan plan;
  plan.arrays = group_cells(g);
  const GridArray& array = plan.arrays.at(0);
  for (const auto& k : g.grid.keys) plan.grid.keys.emplace_back(k.path, k.name);
  plan.grid.max_parallel = g.grid.max_parallel;
  ResolvedRun& shared = g.cells.at(0);
  std::string table;
  int i = 0;
  for (const GridCell& cell : g.grid.cells) {
    std::string dir = cell_folder(shared, run_id, cell, absolute_paths), chosen;
    table += env_exports(g.table->env_of(shared, g.grid, cell, dir, &chosen));
    table += '\n';
    if (!chosen.empty()) plan.checkpoint_folders.push_back(chosen);
    RunCell rc{i++, cell.name, array.label, dir, {}};
    for (const auto& v : cell.values) rc.values.emplace_back(v.key, v.text);
    plan.grid.cells.push_back(std::move(rc));
  }
  shared.env_table = shell_quote((fs::path(run_dir) / kCellTableFile).string());
  ScriptRenderer renderer(load_templates(templates_dir, data_dir() + "/templates"));
  sink(array.shared_script, renderer.render(shared).at(0).text);
  sink(kCellTableFile, table);
  sink(array.script, array_script(array, run_dir, shared.spec.file));
  return plan;
}

}  // namespace

GridPlan plan_grid(ResolvedGrid& g, const std::string& run_dir, const std::string& run_id,
                   const std::string& templates_dir, const ScriptSink& sink, bool absolute_paths) {
  if (g.table) return plan_table_grid(g, run_dir, run_id, templates_dir, sink, absolute_paths);
  GridPlan plan;
  plan.arrays = group_cells(g);
  const bool raced = is_raced(g);
  ScriptRenderer renderer(load_templates(templates_dir, data_dir() + "/templates"));
  for (const auto& k : g.grid.keys) plan.grid.keys.emplace_back(k.path, k.name);
  plan.grid.max_parallel = g.grid.max_parallel;
  plan.grid.raced = raced;
  std::map<int, std::string> array_of;  // cell -> its array's label (a raced grid's: decided by the race)
  if (!raced)
    for (const GridArray& a : plan.arrays)
      for (int i : a.cells) array_of[i] = a.label;
  for (size_t n = 0; n < g.cells.size(); ++n) {
    int i = static_cast<int>(n);
    const GridCell& cell = g.grid.cells[n];
    ResolvedRun& r = g.cells[n];
    std::string dir = cell_folder(r, run_id, cell, absolute_paths);
    for (auto& [name, value] : cell_environment(g.grid, cell)) r.env.emplace_back(name, value);
    r.env.emplace_back("DDPCTL_CELL_DIR", dir);
    if (std::string c = set_checkpoint_folder(r, dir); !c.empty()) plan.checkpoint_folders.push_back(c);
    if (absolute_paths) set_run_dir(r, run_dir);  // a sweep's, not gen's
    // A raced grid's first cell claims the race in its scripts; its winner
    // submits the other cells, and a requeue does not race again.
    std::vector<RenderedScript> rendered = renderer.render(r);
    if (!raced)
      sink(cell_script_name(i), rendered.at(0).text);
    else
      for (const RenderedScript& rs : rendered) sink(fmt::format("cells/{}/{}.sh", rs.label, i), rs.text);
    if (raced && i == 0) {
      // The race's scripts (cells/<label>/0.race.sh): the claim first, and
      // the winner submits the other cells; a requeue does not race again.
      RaceRole role((fs::path(run_dir) / "race").string());
      role.reraces = false;
      role.continues_grid = true;
      role.across = g.across;  // one site of a race across sites: the gate before the rest is submitted
      for (const RenderedScript& rs : renderer.render(r, role))
        sink(fmt::format("cells/{}/0.race.sh", rs.label), rs.text);
    }
    RunCell rc{i, cell.name, raced ? "" : array_of.at(i), dir, {}};
    for (const auto& v : cell.values) rc.values.emplace_back(v.key, v.text);
    plan.grid.cells.push_back(std::move(rc));
  }
  std::sort(plan.grid.cells.begin(), plan.grid.cells.end(),
            [](const RunCell& a, const RunCell& b) { return a.index < b.index; });
  for (const GridArray& a : plan.arrays) sink(a.script, array_script(a, run_dir, g.cells[0].spec.file));
  return plan;
}

std::vector<std::pair<std::string, std::string>> render_grid_scripts(const std::string& spec,
                                                                     const std::vector<std::string>& sets,
                                                                     const std::string& out_dir,
                                                                     const std::string& templates_dir) {
  ResolvedGrid g = load_grid(spec, sets, templates_dir);
  std::vector<std::pair<std::string, std::string>> scripts;
  plan_grid(g, out_dir, g.cells.at(0).spec.name + "-gen", templates_dir,
            [&](const std::string& file, const std::string& text) { scripts.emplace_back(file, text); }, false);
  // The arrays first: they are what sbatch takes.
  std::stable_partition(scripts.begin(), scripts.end(), [](const auto& s) { return s.first.rfind("cells/", 0) != 0; });
  return scripts;
}

std::vector<std::string> write_grid_scripts(const std::string& spec, const std::vector<std::string>& sets,
                                            const std::string& out_dir, const std::string& templates_dir) {
  ResolvedGrid g = load_grid(spec, sets, templates_dir);
  std::string dir = absolute_path(out_dir);
  FileBatch batch(dir, 0755);
  std::vector<std::string> paths;
  plan_grid(g, out_dir, g.cells.at(0).spec.name + "-gen", templates_dir,
            [&](const std::string& file, const std::string& text) {
              batch.write(file, text);
              paths.push_back(dir + "/" + file);
            },
            false);
  batch.commit();
  // The arrays first: they are what sbatch takes.
  std::stable_partition(paths.begin(), paths.end(),
                        [&](const std::string& p) { return p.compare(dir.size() + 1, 6, "cells/") != 0; });
  return paths;
}

}  // namespace ddpctl
