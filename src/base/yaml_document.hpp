#pragma once
// A YAML document as ddpctl reads it: parsed once, refused with a precise
// location when it is not one UTF-8 mapping, and able to say the file, line
// and column of any of its parts (or the --set that gave it).
#include <map>
#include <optional>
#include <string>
#include <yaml-cpp/yaml.h>

#include "base/diagnostics.hpp"

namespace ddpctl {

// A parsed document and what is needed to point at its parts.
struct YamlDocument {
  std::string file;
  YAML::Node root;
  // Field paths set on the command line ("trainer.epochs") -> origin text
  // ("--set trainer.epochs=3"). A value under such a path is reported there.
  std::map<std::string, std::string> overrides;

  Location locate(const std::string& field_path, const YAML::Node& node) const;
};

// Parses `text` (the contents of `file`) as exactly one YAML mapping. Refuses
// invalid UTF-8, non-UTF-8 encodings, empty and multi-document files, and
// syntax errors, each with a precise location. Throws UserError.
YamlDocument parse_yaml_document(const std::string& file, const std::string& text, const std::string& what);

// Reads and parses a file (at most 1 MiB).
YamlDocument load_yaml_file(const std::string& path, const std::string& what);

// A deep copy of `node` in which each node keeps its mark (the line it was
// read from), tag and style, and a mapping its duplicate keys (which the
// readers report): a document read once and copied many times (a grid's
// cells, grid_cell.hpp) says the same lines as one read each time.
// yaml-cpp's own Clone drops the marks.
YAML::Node copy_with_marks(const YAML::Node& node);

// "a mapping", "a list", "a string" ... for messages.
std::string describe_node(const YAML::Node& node);

// Reads a scalar node as a single-line string that may reach a script.
std::optional<std::string> read_scalar(const YamlDocument& doc, const YAML::Node& node, const std::string& field,
                                       Diagnostics& diags, bool allow_tab = false);

}  // namespace ddpctl
