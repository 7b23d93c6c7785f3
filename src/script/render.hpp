#pragma once
// Renders sbatch scripts from mustache templates. In templates, {{name}}
// inserts a value shell-quoted (shell_quote) and {{{name}}} inserts it as is;
// the raw form is only for values ddpctl built or validated to be safe words,
// and for the user's own `setup` lines. docs/templates.md lists the variables.
#include <memory>
#include <string>
#include <vector>

#include "script/resolve.hpp"
#include "script/templates.hpp"

namespace ddpctl {

struct RenderedScript {
  std::string label;      // shape label
  std::string file_name;  // e.g. resnet50-1x4.sbatch
  std::string text;
};

// A race across sites as one site's ddpctl is asked it (docs/race.md
// "Across sites"): only the shapes at `site`, and a gate after the site's
// claim where the job waits for the coordinator's grant.
struct AcrossSites {
  std::string site;         // --site: the login host the shapes name (`on:`)
  std::string coordinator;  // --coordinator: its run on the machine that submitted
  long long gate_s = 300;   // --gate-timeout: the longest wait at the gate
  bool on() const { return !site.empty(); }
};

// How a script joins a race group (race.hpp, docs/race.md).
struct RaceRole {
  std::string dir;  // the run's race/ folder; empty: not a race
  // A requeued winner races the group again (`ddpctl race-again`), up to
  // requeue.max_restarts times; off for a raced grid's first cell.
  bool reraces = true;
  // Race, then sweep: the winner submits the grid's other cells on its
  // shape (`ddpctl sweep continue`) right after it claims the group.
  bool continues_grid = false;
  // Across sites: after this site's claim the job waits at the gate.
  AcrossSites across;
  RaceRole() = default;
  RaceRole(std::string race_dir) : dir(std::move(race_dir)) {}  // NOLINT: a folder is a plain race
  RaceRole(const char* race_dir) : dir(race_dir) {}             // NOLINT
};

// Renders one script per shape with sbatch.sh.mustache and the parts it
// includes, each taken from `templates_dir` when it holds it, else from the
// bundled templates (templates.hpp). With a race (a race group: `submit`
// of a spec with alternatives), each script first claims the group there; the
// first shape to start wins (docs/race.md).
std::vector<RenderedScript> render_scripts(const ResolvedRun& run, const std::string& templates_dir,
                                           const RaceRole& race = {});
// ... with templates already loaded (load_templates).
std::vector<RenderedScript> render_scripts(const ResolvedRun& run, const TemplateSet& templates,
                                           const RaceRole& race = {});

// The templates read once for many runs (a grid's cells): the main template
// with its parts in place is parsed here, not at each render.
class ScriptRenderer {
 public:
  explicit ScriptRenderer(const TemplateSet& templates);
  std::vector<RenderedScript> render(const ResolvedRun& run, const RaceRole& race = {}) const;

 private:
  struct Compiled;
  std::shared_ptr<Compiled> compiled_;
};

// Only the script of the shape labelled `label` (all of them when empty); a
// UserError listing the labels when none has it.
std::vector<RenderedScript> select_shape(std::vector<RenderedScript> scripts, const std::string& label);

// Writes each script into `dir` (created if missing), atomically and
// executable; returns the paths written.
std::vector<std::string> write_scripts(const std::vector<RenderedScript>& scripts, const std::string& dir);

}  // namespace ddpctl
