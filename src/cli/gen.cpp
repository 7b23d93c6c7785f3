// ddpctl gen SPEC: render the run's sbatch scripts.
#include <fmt/format.h>
#include <iostream>
#include <memory>

#include "cli/app.hpp"
#include "cli/common.hpp"
#include "cli/json_output.hpp"
#include "script/preemption_note.hpp"
#include "script/render.hpp"
#include "base/text.hpp"
#include "spec/spec.hpp"
#include "spec/spec_sites.hpp"
#include "sweep/sweep.hpp"
#include "sweep/grid_scripts.hpp"

namespace ddpctl::cli {

void setup_gen(CLI::App& app, Context&) {
  struct Options {
    std::string spec, out_dir = ".", templates, shape, site;
    std::vector<std::string> sets;
    bool to_stdout = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("gen", "Render the sbatch script of each shape of a run spec");
  cmd->add_option("spec", o->spec, "Run spec (YAML)")->required();
  cmd->add_option("-o,--output", o->out_dir, "Folder for the scripts (created if missing)")->capture_default_str();
  cmd->add_option("--set", o->sets, "Override a spec field: KEY=VALUE with a dotted KEY, e.g. trainer.epochs=3");
  cmd->add_option("--templates", o->templates,
                  "Folder with template parts to use instead of the bundled ones (default: $DDPCTL_TEMPLATES)");
  cmd->add_option("--shape", o->shape, "Render only the shape with this label (e.g. 4x1)");
  cmd->add_flag("--stdout", o->to_stdout, "Print the script(s) instead of writing files");
  cmd->add_option("--site", o->site, "Of a spec naming sites (`on:`): the scripts of the shapes at this login host");
  cmd->callback([o] {
    RunSpec read = load_run_spec(o->spec, o->sets);
    if (read.has_grid) {  // each array's script, then each cell's
      if (o->to_stdout) {
        nlohmann::json files = nlohmann::json::array();
        for (const auto& [file, text] : render_grid_scripts(o->spec, o->sets, o->out_dir, templates_dir(o->templates)))
          std::cout << "# ==> " << file << " <==\n" << text, files.push_back({{"file", file}, {"text", text}});
        json_fact("scripts", files);
        return;
      }
      nlohmann::json files = nlohmann::json::array();
      for (const auto& path : write_grid_scripts(o->spec, o->sets, o->out_dir, templates_dir(o->templates)))
        std::cout << path << '\n', files.push_back({{"file", path}});
      json_fact("scripts", files);
      return;
    }
    // A spec naming sites is rendered per site: each has its own profile.
    std::string site = o->site;
    if (site.empty() && read.names_sites) {
      std::vector<std::string> hosts = spec_hosts(read);
      if (hosts.size() > 1)
        throw UserError(Location{"--site"}, "",
                        fmt::format("this spec names {} sites, each with its own profile: --site HOST renders the "
                                    "scripts of one ({})",
                                    hosts.size(), join(hosts, ", ")));
      site = hosts.front();
    }
    ResolvedRun run = load_and_resolve(o->spec, o->sets, site);
    if (run.spec.has_sweep)
      if (std::string note = sweep_list_note(o->spec, false); !note.empty()) ConsoleOutput().note(note);
    for (const auto& n : preemption_notes(run)) ConsoleOutput().note(n);
    auto scripts = select_shape(render_scripts(run, templates_dir(o->templates)), o->shape);
    nlohmann::json files = nlohmann::json::array();
    if (!o->to_stdout) {
      std::vector<std::string> paths = write_scripts(scripts, o->out_dir);
      for (size_t i = 0; i < paths.size(); ++i) {
        std::cout << paths[i] << '\n';
        files.push_back({{"file", paths[i]}, {"shape", scripts[i].label}});
      }
      json_fact("scripts", files);
      return;
    }
    for (const auto& s : scripts) files.push_back({{"file", s.file_name}, {"shape", s.label}, {"text", s.text}});
    json_fact("scripts", files);
    for (const auto& s : scripts) {
      if (scripts.size() > 1) std::cout << "# ==> " << s.file_name << " <==\n";
      std::cout << s.text;
    }
  });
}

}  // namespace ddpctl::cli
