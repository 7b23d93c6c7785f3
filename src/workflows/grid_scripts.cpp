#include "workflows/grid_scripts.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <map>

#include "base/files.hpp"
#include "base/paths.hpp"
#include "explain/race.hpp"
#include "script/render.hpp"
#include "spec/grid_cell.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

GridPlan plan_grid(ResolvedGrid& g, const std::string& run_dir, const std::string& run_id,
                   const std::string& templates_dir, const ScriptSink& sink, bool absolute_paths) {
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
    std::string dir = (fs::path(r.spec.output_dir) / run_id / cell.dir_name).lexically_normal().string();
    if (absolute_paths) dir = absolute_path(dir);
    for (auto& [name, value] : cell_environment(g.grid, cell)) r.env.emplace_back(name, value);
    r.env.emplace_back("DDPCTL_CELL_DIR", dir);
    if (std::string c = set_checkpoint_folder(r, dir); !c.empty()) plan.checkpoint_folders.push_back(c);
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
  ResolvedGrid g = load_and_resolve_grid(spec, sets);
  std::vector<std::pair<std::string, std::string>> scripts;
  plan_grid(g, out_dir, g.cells.at(0).spec.name + "-gen", templates_dir,
            [&](const std::string& file, const std::string& text) { scripts.emplace_back(file, text); }, false);
  // The arrays first: they are what sbatch takes.
  std::stable_partition(scripts.begin(), scripts.end(), [](const auto& s) { return s.first.rfind("cells/", 0) != 0; });
  return scripts;
}

std::vector<std::string> write_grid_scripts(const std::string& spec, const std::vector<std::string>& sets,
                                            const std::string& out_dir, const std::string& templates_dir) {
  ResolvedGrid g = load_and_resolve_grid(spec, sets);
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
