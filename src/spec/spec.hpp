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
// `site`: read at that site (spec_sites.hpp: its view, only its shapes;
// kHereSite for the shapes without `on:`); "": every shape, each site's view
// checked.
RunSpec load_run_spec(const std::string& path, const std::vector<std::string>& overrides = {},
                      const std::string& site = "");
// The same from text already in memory (tests, stdin).
RunSpec parse_run_spec(const std::string& file, const std::string& text, const std::vector<std::string>& overrides = {},
                       const std::string& site = "");
// The same from a parsed document (a grid's cell, grid.hpp).
RunSpec parse_run_spec_document(const YamlDocument& doc, const std::string& site = "");

// --site's word for the shapes a spec submits where ddpctl runs (no `on:`).
inline constexpr const char* kHereSite = "-";

}  // namespace ddpctl
