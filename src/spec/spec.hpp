#pragma once
// Loading a run spec (run_spec.hpp has the types): everything that does not
// need the cluster profile is checked here; resolve.hpp checks the rest
// against the profile.
#include <string>
#include <vector>

#include "spec/run_spec.hpp"
#include "base/yaml_reader.hpp"

namespace ddpctl {

// Loads a run spec file, applying `--set key=value` overrides first. Throws
// UserError with every problem found.
RunSpec load_run_spec(const std::string& path, const std::vector<std::string>& overrides = {});
// The same from text already in memory (tests, stdin).
RunSpec parse_run_spec(const std::string& file, const std::string& text, const std::vector<std::string>& overrides = {});
// The same from a parsed document (a grid's cell, grid.hpp).
RunSpec parse_run_spec_document(const YamlDocument& doc);

}  // namespace ddpctl
