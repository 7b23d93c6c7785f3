#pragma once
// Reading a YAML document's mappings into typed structures while keeping
// every problem, with the file, line and column it comes from, for one
// combined report. The document itself: yaml_document.hpp.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include <yaml-cpp/yaml.h>

#include "base/diagnostics.hpp"
#include "base/yaml_document.hpp"

namespace ddpctl {

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
  // A decimal number above 0 and at most `max` (no inf, nan or hex).
  std::optional<double> positive_number(const std::string& key, double max);
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

}  // namespace ddpctl
