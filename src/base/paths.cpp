#include "base/paths.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <set>
#include <unistd.h>
#ifdef __APPLE__
#include <mach-o/dyld.h>
#endif

#include "base/text.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

std::string executable_path() {
  // Read once: every script rendered names it (a grid's 100,000 cells).
  static const std::string path = [] {
    std::error_code ec;
#ifdef __APPLE__
    char buf[4096];
    uint32_t size = sizeof buf;
    if (_NSGetExecutablePath(buf, &size) != 0) return std::string();
    fs::path exe = fs::canonical(buf, ec);
#else
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
#endif
    return ec ? std::string() : exe.string();
  }();
  return path;
}

std::string executable_dir() {
  std::string exe = executable_path();
  return exe.empty() ? exe : fs::path(exe).parent_path().string();
}

std::string agent_program() {
  if (const char* env = std::getenv("DDPCTL_PROGRAM"); env && *env) return env;
  return (std::filesystem::path(executable_dir()) / "ddpctl").string();
}

std::string installed_prefix() {
  std::string bin = executable_dir();
  if (bin.empty()) return "";
  fs::path prefix = fs::path(bin).parent_path();
  std::error_code ec;
  return fs::is_directory(prefix / "share" / "ddpctl" / "templates", ec) ? prefix.string() : "";
}

namespace {

bool is_executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
}

}  // namespace

std::string data_dir() {
  if (const char* env = std::getenv("DDPCTL_DATA_DIR"); env && *env) return env;
  if (std::string prefix = installed_prefix(); !prefix.empty()) return prefix + "/share/ddpctl";
  return DDPCTL_SOURCE_DATA_DIR;
}

namespace {

std::vector<std::string> colon_list(const char* value) {
  std::vector<std::string> dirs;
  std::string list = value ? value : "";
  for (size_t start = 0; start <= list.size();) {
    size_t colon = list.find(':', start);
    std::string dir = list.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (!dir.empty()) dirs.push_back(dir);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return dirs;
}

void add_once(std::vector<std::string>& dirs, const std::string& dir) {
  if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
}

}  // namespace

std::vector<std::string> site_cluster_dirs() {
  std::vector<std::string> dirs;
  // The environment module of an installed prefix names its own folder.
  for (const auto& dir : colon_list(std::getenv("DDPCTL_SITE_CLUSTERS"))) add_once(dirs, dir);
  add_once(dirs, "/etc/ddpctl/clusters");
  if (std::string prefix = installed_prefix(); !prefix.empty() && prefix != "/usr")
    add_once(dirs, prefix + "/etc/ddpctl/clusters");
  return dirs;
}

std::string find_on_path(const std::string& path_list, const std::string& name) {
  if (name.find('/') != std::string::npos) return is_executable(name) ? name : "";
  const std::string& list = path_list;
  for (size_t start = 0; start <= list.size();) {
    size_t colon = list.find(':', start);
    std::string dir = list.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (!dir.empty() && is_executable(fs::path(dir) / name)) return (fs::path(dir) / name).string();
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return "";
}

std::string find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  return find_on_path(path ? path : "", name);
}

std::string default_trainer_program() {
  if (const char* env = std::getenv("DDPCTL_TRAINER"); env && *env) return env;
  if (!find_program("ddp-train").empty()) return "ddp-train";
  std::string bin = executable_dir();
  if (!bin.empty())
    for (const fs::path& candidate : {fs::path(bin) / "ddp-train", fs::path(bin).parent_path() / "trainer" / "ddp-train"})
      if (is_executable(candidate)) return candidate.lexically_normal().string();
  return "ddp-train";
}

std::vector<std::string> cluster_search_path() {
  std::vector<std::string> dirs = colon_list(std::getenv("DDPCTL_CLUSTERS"));
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) dirs.push_back(std::string(xdg) + "/ddpctl/clusters");
  else if (const char* home = std::getenv("HOME"); home && *home) dirs.push_back(std::string(home) + "/.config/ddpctl/clusters");
  for (const auto& dir : site_cluster_dirs()) dirs.push_back(dir);
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
