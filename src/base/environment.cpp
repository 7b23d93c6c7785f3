#include "base/environment.hpp"

#include <cstdlib>
#include <unistd.h>

#include "base/paths.hpp"

namespace ddpctl {

std::string Environment::value(const std::string& name, const std::string& fallback) const {
  auto v = get(name);
  return v && !v->empty() ? *v : fallback;
}

std::string Environment::find_program(const std::string& name) const {
  return find_on_path(get("PATH").value_or(""), name);
}

std::optional<std::string> SystemEnvironment::get(const std::string& name) const {
  const char* v = std::getenv(name.c_str());
  return v ? std::optional<std::string>(v) : std::nullopt;
}

std::string SystemEnvironment::hostname() const {
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  std::string h = host;
  return h.substr(0, h.find('.'));
}

}  // namespace ddpctl
