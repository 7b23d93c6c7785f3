#include "spec/run_spec.hpp"

namespace ddpctl {

Location Shape::where_of(const std::string& name, const Location& fallback) const {
  auto it = where.find(name);
  return it == where.end() ? fallback : it->second;
}

Location RunSpec::where_of(const std::string& field) const {
  auto it = where.find(field);
  return it == where.end() ? Location{file} : it->second;
}

}  // namespace ddpctl
