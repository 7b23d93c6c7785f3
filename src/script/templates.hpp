#pragma once
// The job script's template in parts (docs/templates.md): sbatch.sh.mustache
// includes one part per concern with {{> name}}, e.g. {{> race.sh}} for
// race.sh.mustache. Each file comes from the user's templates folder
// (--templates, $DDPCTL_TEMPLATES) when it holds it, else from the bundled one,
// so that a folder may override the whole template or any one part.
#include <map>
#include <string>
#include <vector>

namespace ddpctl {

// The main template's file name.
inline constexpr const char* kMainTemplate = "sbatch.sh.mustache";

// The parts' names, in the order the bundled sbatch.sh.mustache includes
// them: "race.sh", "environment.sh", ...; part NAME is the file NAME.mustache.
const std::vector<std::string>& template_part_names();

struct TemplateFile {
  std::string path;  // where it was read
  std::string text;
};

struct TemplateSet {
  TemplateFile main;                          // sbatch.sh.mustache
  std::map<std::string, TemplateFile> parts;  // by part name: every part included, directly or not
};

// sbatch.sh.mustache and every part it includes (parts may include parts),
// each from `dir` when it holds the file, else from `bundled` (`dir` may be
// `bundled`). UserError when `dir` is not a folder; when `dir` holds a
// .mustache file that is neither the main template nor a part (a misspelled
// override); when a template includes an unknown part or, through others,
// itself; when a file is in neither folder; when one is not valid mustache.
TemplateSet load_templates(const std::string& dir, const std::string& bundled);

// The names of the partial tags ({{> name}}) in a template, in order, as
// kainjow reads them (set-delimiter tags followed; comments skipped).
std::vector<std::string> partial_tags(const std::string& text);

}  // namespace ddpctl
