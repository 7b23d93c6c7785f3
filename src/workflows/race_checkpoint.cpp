#include "workflows/race_checkpoint.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <sstream>

#include "base/diagnostics.hpp"
#include "base/files.hpp"
#include "base/tar_archive.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

namespace {

// A word as the shell reads `export NAME=WORD` that shell_quote wrote:
// '...' literal, \x escapes, the rest as is.
std::string unquoted(const std::string& word) {
  std::string out;
  bool single = false;
  for (size_t i = 0; i < word.size(); ++i) {
    char c = word[i];
    if (single) {
      if (c == '\'') single = false;
      else out += c;
    } else if (c == '\'') {
      single = true;
    } else if (c == '\\' && i + 1 < word.size()) {
      out += word[++i];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string run_checkpoint_folder(const Run& run) {
  if (run.shapes.empty()) return "";
  std::istringstream script(read_file(run.dir + "/" + run.shapes.front().script));
  const std::string prefix = "export DDPCTL_CHECKPOINT_DIR=";
  std::string line, folder;
  while (std::getline(script, line))
    if (line.rfind(prefix, 0) == 0) folder = unquoted(line.substr(prefix.size()));
  if (folder.empty()) return "";
  if (folder[0] != '/') folder = (fs::path(run.cwd) / folder).lexically_normal().string();
  return folder;
}

std::vector<std::string> checkpoint_send_argv(const std::string& folder) {
  std::error_code ec;
  if (folder.empty() || !fs::is_directory(folder, ec) || fs::is_empty(folder, ec))
    return {"tar", "-cf", "-", "-T", "/dev/null"};
  return {"tar", "-cf", "-", "-C", folder, "."};
}

nlohmann::json receive_checkpoint(const Run& run, const std::string& tar) {
  const std::string folder = run_checkpoint_folder(run);
  if (folder.empty())
    throw UserError(Location{run.dir}, "", "the run's script names no checkpoint folder (DDPCTL_CHECKPOINT_DIR)");
  TarListing listing = read_tar_members(tar);
  if (!listing.problem.empty())
    throw UserError(Location{folder}, "", "the checkpoint that came is not a whole tar archive, nothing was "
                                          "replaced: " + listing.problem);
  std::vector<TarMember> members;
  long long bytes = 0;
  int files = 0;
  for (auto m : listing.members) {
    if (m.name.rfind("./", 0) == 0) m.name = m.name.substr(2);
    if (m.name.empty() || m.name == ".") continue;
    bool plain = m.type == TarMember::Type::File || m.type == TarMember::Type::Folder;
    bool relative = m.name[0] != '/';
    for (const auto& part : split(m.name, '/'))
      if (part.empty() || part == "." || part == "..") relative = false;
    if (!plain || !relative || m.name.find_first_of(std::string("\0\n\r", 3)) != std::string::npos)
      throw UserError(Location{folder}, "",
                      fmt::format("the checkpoint that came holds '{}' ({}), which is not a file or folder under "
                                  "it: nothing was replaced",
                                  printable(m.name, 200), describe_tar_type(m)));
    if (m.type == TarMember::Type::File) {
      ++files;
      bytes += m.size;
    }
    members.push_back(m);
  }
  const std::string incoming = fmt::format("{}.incoming-{}", folder, utc_now_iso());
  std::error_code ec;
  fs::remove_all(incoming, ec);
  fs::create_directories(incoming);
  unpack_tar_members(tar, members, incoming);
  nlohmann::json out = {{"folder", folder}, {"files", files}, {"bytes", bytes}};
  if (fs::is_directory(folder, ec) && !fs::is_empty(folder, ec)) {
    const std::string kept = fmt::format("{}.before-{}", folder, utc_now_iso());
    fs::rename(folder, kept);
    out["kept"] = kept;
  } else {
    fs::remove_all(folder, ec);
  }
  fs::rename(incoming, folder);
  return out;
}

}  // namespace ddpctl
