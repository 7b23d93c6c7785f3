#pragma once
#include <string>
#include <vector>

#include "yaml_reader.hpp"

namespace ddpctl {

// Applies `--set key=value` overrides to a parsed document. Keys are dotted
// paths ("trainer.epochs", "alternatives.1.nodes" or "alternatives[1].nodes").
// A value that starts with '[' or '{' is read as YAML flow ("[cuda/12, nccl]");
// any other value is taken as one plain string, and an empty value unsets the
// field. Each overridden path is remembered so that problems with its value are
// reported as coming from the command line. Throws UserError.
void apply_overrides(YamlDocument& doc, const std::vector<std::string>& sets);

}  // namespace ddpctl
