#include "script/templates.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fmt/format.h>
#include <kainjow/mustache.hpp>

#include "base/diagnostics.hpp"
#include "base/files.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

const std::vector<std::string>& template_part_names() {
  static const std::vector<std::string> names{"race.sh",     "environment.sh", "rendezvous.sh", "requeue.sh",
                                              "agent.sh",    "snapshot.sh",    "container.sh",  "launch.sh"};
  return names;
}

namespace {

constexpr const char* kExtension = ".mustache";

bool is_part(const std::string& name) {
  const auto& names = template_part_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Every file a templates folder may hold: the main template, then the parts.
std::vector<std::string> template_file_names() {
  std::vector<std::string> files{kMainTemplate};
  for (const auto& n : template_part_names()) files.push_back(n + kExtension);
  return files;
}

std::string trim_space(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// A misspelled override would otherwise be ignored without a word.
void check_folder(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw UserError(Location{dir}, "",
                    fs::exists(dir, ec)
                        ? "not a folder: --templates (or $DDPCTL_TEMPLATES) names a folder of template parts"
                        : "templates folder not found (--templates or $DDPCTL_TEMPLATES)");
  const std::vector<std::string> known = template_file_names();
  std::vector<std::string> unknown;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string file = it->path().filename().string();
    if (ends_with(file, kExtension) && std::find(known.begin(), known.end(), file) == known.end())
      unknown.push_back(file);
  }
  if (ec) throw UserError(Location{dir}, "", "cannot read the templates folder: " + ec.message());
  if (unknown.empty()) return;
  std::sort(unknown.begin(), unknown.end());
  std::vector<Diagnostic> diags;
  for (const auto& file : unknown)
    diags.push_back({Location{(fs::path(dir) / file).string()}, "",
                     fmt::format("not a template of ddpctl{}, so it would not be used; the templates: {}",
                                 did_you_mean(file, known), join(known, ", "))});
  throw UserError(std::move(diags));
}

TemplateFile read_template(const std::string& dir, const std::string& bundled, const std::string& file) {
  for (const std::string& d : {dir, bundled}) {
    std::string path = (fs::path(d) / file).string();
    if (fs::is_regular_file(path)) {
      TemplateFile t{path, read_file(path)};
      kainjow::mustache::mustache parsed{t.text};
      if (!parsed.is_valid()) throw UserError(Location{path}, "", "invalid template: " + parsed.error_message());
      return t;
    }
  }
  std::string path = (fs::path(bundled) / file).string();
  std::error_code ec;
  if (fs::equivalent(dir, bundled, ec) || !fs::is_directory(bundled, ec))
    throw UserError(Location{path}, "", "template not found: the bundled templates are incomplete (reinstall ddpctl)");
  throw UserError(Location{path}, "",
                  fmt::format("template not found, and {} has none either: the bundled templates are incomplete "
                              "(reinstall ddpctl, or put {} into the --templates folder)",
                              dir, file));
}

}  // namespace

std::vector<std::string> partial_tags(const std::string& text) {
  std::vector<std::string> names;
  std::string begin = "{{", end = "}}";
  for (size_t pos = text.find(begin); pos != std::string::npos; pos = text.find(begin, pos)) {
    size_t contents = pos + begin.size();
    std::string close = end;
    if (begin == "{{" && end == "}}" && contents < text.size() && text[contents] == '{') {
      ++contents;  // {{{raw}}}
      close = "}}}";
    }
    size_t stop = text.find(close, contents);
    if (stop == std::string::npos) break;  // unclosed: kainjow reports it
    std::string tag = trim_space(text.substr(contents, stop - contents));
    pos = stop + close.size();
    if (close == "}}}" || tag.empty()) continue;
    if (tag.front() == '>') {
      names.push_back(trim_space(tag.substr(1)));
    } else if (tag.front() == '=' && tag.size() >= 5 && tag.back() == '=') {
      std::string inner = trim_space(tag.substr(1, tag.size() - 2));
      size_t space = inner.find(' ');
      if (space == std::string::npos) continue;
      size_t next = inner.find_first_not_of(' ', space + 1);
      begin = inner.substr(0, space);
      end = inner.substr(next);
    }
  }
  return names;
}

TemplateSet load_templates(const std::string& dir, const std::string& bundled) {
  check_folder(dir);
  TemplateSet set;
  set.main = read_template(dir, bundled, kMainTemplate);
  // Depth first, with the chain of includes so far, to catch a part that includes itself.
  std::vector<std::string> chain;
  auto visit = [&](const auto& self, const TemplateFile& t) -> void {
    for (const std::string& name : partial_tags(t.text)) {
      if (!is_part(name))
        throw UserError(Location{t.path}, "",
                        fmt::format("includes an unknown template part {}{}; the parts: {}", printable(name),
                                    did_you_mean(name, template_part_names()), join(template_part_names(), ", ")));
      if (std::find(chain.begin(), chain.end(), name) != chain.end())
        throw UserError(Location{t.path}, "",
                        fmt::format("part {} includes itself: {} > {}", name, join(chain, " > "), name));
      if (set.parts.count(name)) continue;
      TemplateFile part = read_template(dir, bundled, name + kExtension);
      set.parts[name] = part;
      chain.push_back(name);
      self(self, part);
      chain.pop_back();
    }
  };
  visit(visit, set.main);
  return set;
}

}  // namespace ddpctl
