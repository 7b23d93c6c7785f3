#include "paths.hpp"

#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <set>

#include "text.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

std::string data_dir() {
  if (const char* env = std::getenv("DDPCTL_DATA_DIR"); env && *env) return env;
  if (fs::is_directory(fs::path(DDPCTL_INSTALL_DATA_DIR) / "templates")) {
    std::error_code ec;
    // Prefer the installed copy only when this binary is the installed one.
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec && fs::path(DDPCTL_INSTALL_DATA_DIR).parent_path().parent_path() == exe.parent_path().parent_path())
      return DDPCTL_INSTALL_DATA_DIR;
  }
  return DDPCTL_SOURCE_DATA_DIR;
}

std::vector<std::string> cluster_search_path() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("DDPCTL_CLUSTERS"); env && *env) {
    std::string list = env;
    for (size_t start = 0; start <= list.size();) {
      size_t colon = list.find(':', start);
      std::string dir = list.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      if (!dir.empty()) dirs.push_back(dir);
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  }
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) dirs.push_back(std::string(xdg) + "/ddpctl/clusters");
  else if (const char* home = std::getenv("HOME"); home && *home) dirs.push_back(std::string(home) + "/.config/ddpctl/clusters");
  dirs.push_back(data_dir() + "/configs/clusters");
  return dirs;
}

std::string find_cluster_profile(const std::string& cluster, const std::string& spec_file, const Location& where) {
  auto ends_with = [&](const char* suffix) {
    std::string s(suffix);
    return cluster.size() >= s.size() && cluster.compare(cluster.size() - s.size(), s.size(), s) == 0;
  };
  if (cluster.find('/') != std::string::npos || ends_with(".yaml") || ends_with(".yml")) {
    fs::path p(cluster);
    if (p.is_relative()) p = fs::path(spec_file).parent_path() / p;
    if (!fs::is_regular_file(p))
      throw UserError(where, "cluster", fmt::format("cluster profile file {} does not exist", p.string()));
    return p.string();
  }
  std::set<std::string> known;
  for (const auto& dir : cluster_search_path()) {
    fs::path candidate = fs::path(dir) / (cluster + ".yaml");
    if (fs::is_regular_file(candidate)) return candidate.string();
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (entry.path().extension() == ".yaml") known.insert(entry.path().stem().string());
  }
  std::vector<std::string> names(known.begin(), known.end());
  throw UserError(where, "cluster",
                  fmt::format("no cluster profile named '{}'{}; known profiles: {}; searched {}", cluster,
                              did_you_mean(cluster, names), names.empty() ? "none" : join(names, ", "),
                              join(cluster_search_path(), ", ")));
}

}  // namespace ddpctl
