#include "spec/grid.hpp"

namespace ddpctl {

std::string GridCell::value_of(const std::string& key_path) const {
  for (const auto& v : values)
    if (v.key == key_path) return v.text;
  return "";
}

const std::vector<std::string>& grid_own_fields() {
  static const std::vector<std::string> fields = {"include", "exclude", "max_parallel"};
  return fields;
}

}  // namespace ddpctl
