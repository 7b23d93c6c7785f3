#pragma once
// Reading YAML documents into typed structures while keeping every problem,
// with the file, line and column it comes from, for one combined report.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>
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

// Checks a string value; returns a problem ("must be ...") or nullopt.
using StringCheck = std::function<std::optional<std::string>(const std::string&)>;

// Reads one YAML mapping. Every key that is read is marked as known; finish()
// reports the rest as unknown (with "did you mean") and any duplicated key.
class MapReader {
 public:
  MapReader(const YamlDocument& doc, YAML::Node node, std::string path, Diagnostics& diags);

  bool valid() const { return valid_; }  // false when the node was not a mapping
  bool has(const std::string& key);      // present and not null; marks it known
  YAML::Node node(const std::string& key);  // marks known; Undefined node if absent
  std::string field(const std::string& key) const;
  Location where(const std::string& key) const;  // the value's position (or the map's)
  Location self() const;
  const YamlDocument& document() const { return doc_; }
  Diagnostics& diagnostics() { return diags_; }
  void error(const std::string& key, std::string message);

  // Typed getters: nullopt when absent/null or invalid (the problem is recorded).
  std::optional<std::string> string(const std::string& key, const StringCheck& check = {});
  std::optional<long long> integer(const std::string& key, long long min, long long max);
  std::optional<bool> boolean(const std::string& key);
  std::optional<long long> memory_mib(const std::string& key);  // Slurm memory size, in MiB
  std::optional<long long> slurm_time(const std::string& key);  // Slurm time limit, in seconds
  std::optional<long long> span(const std::string& key);        // "30s", "10m", "2h", in seconds
  std::optional<std::vector<std::string>> string_list(const std::string& key, const StringCheck& check = {},
                                                      bool allow_tab = false);
  // A mapping of string keys to scalar values, in file order.
  std::optional<std::vector<std::pair<std::string, std::string>>> string_map(const std::string& key);
  // A mapping of keys to sub-mappings, in file order (for named sections).
  std::vector<std::pair<std::string, YAML::Node>> entries(const std::string& key);

  // Reports unknown keys against `known` candidates and duplicates.
  void finish();

 private:
  struct Entry {
    std::string key;
    YAML::Node key_node, value;
    bool used = false;
  };
  Entry* find(const std::string& key);
  std::optional<std::string> scalar(const std::string& key, bool allow_tab = false);
  // Reads a scalar through `parse(text, &problem)`, recording the problem.
  template <class T, class Parse>
  std::optional<T> parsed(const std::string& key, Parse parse);

  const YamlDocument& doc_;
  YAML::Node node_;
  std::string path_;
  Diagnostics& diags_;
  std::vector<Entry> entries_;
  std::vector<std::string> asked_;  // every key asked for: the "did you mean" candidates
  bool valid_ = true;
};

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
