#pragma once
#include <optional>
#include <string>
#include <vector>

#include "base/yaml_reader.hpp"

namespace ddpctl {

// Applies `--set key=value` overrides to a parsed document. Keys are dotted
// paths ("trainer.epochs", "alternatives.1.nodes" or "alternatives[1].nodes").
// A value that starts with '[' or '{' is read as YAML flow ("[cuda/12, nccl]");
// any other value is taken as one plain string, and an empty value unsets the
// field. Each overridden path is remembered so that problems with its value are
// reported as coming from the command line. Throws UserError.
void apply_overrides(YamlDocument& doc, const std::vector<std::string>& sets);

// The path's normal form ("alternatives.1.nodes" -> "alternatives[1].nodes"),
// nullopt when it is not a field path.
std::optional<std::string> normalize_field_path(const std::string& path);
// Sets the field at `path` under `root` to `value` (a grid's cell, grid.hpp),
// making the mappings on the way: a problem in words when it cannot.
std::optional<std::string> set_field_path(YAML::Node root, const std::string& path, const YAML::Node& value);

}  // namespace ddpctl
