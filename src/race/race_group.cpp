#include "race/race_group.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <set>

#include "base/files.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

std::vector<std::string> RaceGroup::labels() const {
  std::vector<std::string> out;
  for (const auto& e : entries) out.push_back(shape(e).label);
  return out;
}

RaceGroup load_race_group(const std::vector<std::string>& specs, const std::vector<std::string>& sets,
                          const AcrossSites& across) {
  RaceGroup g;
  g.across = across;
  std::set<std::string> seen;
  for (const auto& spec : specs) {
    if (auto problem = script_value_problem(spec))
      throw UserError(Location{printable(spec)}, "", "the spec's path " + *problem);
    std::string abs = fs::absolute(spec).lexically_normal().string();
    if (!seen.insert(abs).second)
      throw UserError(Location{spec}, "", "this spec is given twice; a race needs different shapes");
    g.parts.push_back(load_and_resolve(spec, sets, across.site));
    if (g.parts.back().spec.names_sites && !across.on())
      throw UserError(g.parts.back().spec.where_of("on"), "on",
                      "this spec names its sites (`on:`): `ddpctl submit SPEC` races it across them (docs/race.md "
                      "\"Across sites\"); `ddpctl race` races specs at one site");
    if (g.parts.back().spec.has_sweep)
      throw UserError(g.parts.back().spec.where_of("sweep"), "sweep",
                      "a sweep runs every shape (`ddpctl sweep`); a race keeps one: use `alternatives:`");
    g.specs.push_back({spec, read_file(spec)});
  }
  const ResolvedRun& first = g.parts.front();
  for (size_t k = 1; k < g.parts.size(); ++k) {
    const ResolvedRun& p = g.parts[k];
    if (p.profile.name != first.profile.name)
      throw UserError(p.spec.where_of("cluster"), "cluster",
                      fmt::format("a race runs on one cluster (one Slurm to cancel the losers, one filesystem for "
                                  "the claim): {} uses {}, this spec uses {}",
                                  first.spec.file, first.profile.name, p.profile.name));
  }
  // Labels name the claim's files and the status rows: unique across specs.
  std::map<std::string, int> count;
  for (const auto& p : g.parts)
    for (const auto& s : p.shapes) ++count[s.label];
  std::set<std::string> labels, scripts;
  for (size_t k = 0; k < g.parts.size(); ++k) {
    ResolvedRun& p = g.parts[k];
    for (size_t i = 0; i < p.shapes.size(); ++i) {
      ResolvedShape& s = p.shapes[i];
      if (count[s.label] > 1) s.label = p.spec.name + "-" + s.label;
      if (!labels.insert(s.label).second)
        throw UserError(p.spec.where_of("name"), "name",
                        fmt::format("two shapes of the race would both be labelled {}; give the specs different "
                                    "names or the alternatives different labels",
                                    s.label));
      if (!scripts.insert(s.script_name).second) {
        s.script_name = s.job_name + "." + s.label + ".sbatch";
        scripts.insert(s.script_name);
      }
      g.entries.push_back({k, i});
    }
  }
  if (g.entries.size() < 2 && !across.on())
    throw UserError(Location{specs.front()}, "alternatives",
                    "a race needs at least two shapes: give a spec with `alternatives:` or several specs");
  // A site's run of a race across sites is that site's: its own identity.
  std::vector<std::string> identity_sets = sets;
  if (across.on()) identity_sets.push_back("--site=" + across.site);
  g.identity = run_identity(g.specs, identity_sets, "");
  return g;
}

std::vector<RenderedScript> render_group(const RaceGroup& g, const std::string& templates,
                                         const std::string& race_folder) {
  std::vector<RenderedScript> out;
  RaceRole role(race_folder);
  if (!race_folder.empty()) role.across = g.across;
  for (const auto& p : g.parts)
    for (auto& s : render_scripts(p, templates, role)) out.push_back(std::move(s));
  return out;
}

RaceRequest race_of_submit(const SubmitRequest& req) {
  if (req.fit_time)
    throw UserError(Location{"--fit-time"}, "", "fits one shape's time limit; this spec submits a race (pick one shape with --shape)");
  RaceRequest race;
  race.specs = {req.spec};
  race.sets = req.sets;
  race.runs_root = req.runs_root;
  race.templates_dir = req.templates_dir;
  race.dry_run = req.dry_run;
  race.preflight = req.preflight;
  race.again = req.again;
  race.snapshot = req.snapshot;
  race.snapshot_from = req.snapshot_from;
  race.rank_by = req.rank_by;
  race.across = req.across;
  return race;
}

}  // namespace ddpctl
