// ddpctl gen SPEC: render the run's sbatch scripts.
#include <cstdlib>
#include <fmt/format.h>
#include <filesystem>
#include <iostream>
#include <memory>

#include "app.hpp"
#include "common.hpp"
#include "files.hpp"
#include "paths.hpp"
#include "render.hpp"
#include "text.hpp"

namespace ddpctl::cli {

namespace {

struct GenOptions {
  std::string spec;
  std::string out_dir = ".";
  std::vector<std::string> sets;
  std::string templates;
  std::string shape;
  bool to_stdout = false;
};

void run_gen(const GenOptions& o) {
  if (auto problem = script_value_problem(o.spec))
    throw UserError(Location{printable(o.spec)}, "", "the spec's path " + *problem);
  ResolvedRun run = load_and_resolve(o.spec, o.sets);
  std::vector<RenderedScript> scripts = render_scripts(run, templates_dir(o.templates));
  if (!o.shape.empty()) {
    std::vector<std::string> labels;
    std::vector<RenderedScript> chosen;
    for (auto& s : scripts) {
      labels.push_back(s.label);
      if (s.label == o.shape) chosen.push_back(s);
    }
    if (chosen.empty())
      throw UserError(Location{"--shape"}, "", fmt::format("no shape labelled {}{}; shapes: {}", printable(o.shape),
                                                          did_you_mean(o.shape, labels), join(labels, ", ")));
    scripts = chosen;
  }
  if (o.to_stdout) {
    for (const auto& s : scripts) {
      if (scripts.size() > 1) std::cout << "# ==> " << s.file_name << " <==\n";
      std::cout << s.text;
    }
    return;
  }
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) throw UserError(Location{o.out_dir}, "", "cannot create the output folder: " + ec.message());
  for (const auto& s : scripts) {
    std::string path = (std::filesystem::path(o.out_dir) / s.file_name).string();
    write_file_atomic(path, s.text, 0755);
    std::cout << path << '\n';
  }
}

}  // namespace

void setup_gen(CLI::App& app) {
  auto opts = std::make_shared<GenOptions>();
  CLI::App* cmd = app.add_subcommand("gen", "Render the sbatch script of each shape of a run spec");
  cmd->add_option("spec", opts->spec, "Run spec (YAML)")->required();
  cmd->add_option("-o,--output", opts->out_dir, "Folder for the scripts (created if missing)")->capture_default_str();
  cmd->add_option("--set", opts->sets, "Override a spec field: KEY=VALUE with a dotted KEY, e.g. trainer.epochs=3");
  cmd->add_option("--templates", opts->templates, "Folder with sbatch.sh.mustache (default: $DDPCTL_TEMPLATES or the bundled one)");
  cmd->add_option("--shape", opts->shape, "Render only the shape with this label (e.g. 4x1)");
  cmd->add_flag("--stdout", opts->to_stdout, "Print the script(s) instead of writing files");
  cmd->callback([opts] { run_gen(*opts); });
}

}  // namespace ddpctl::cli
