#include "runs/snapshot_record.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/files.hpp"
#include "base/text.hpp"

namespace fs = std::filesystem;

namespace ddpctl {

std::string snapshot_record(const std::string& run_dir) {
  std::error_code ec;
  if (!fs::exists(run_dir + "/snapshot.json", ec)) return "";
  return read_file(run_dir + "/snapshot.json");
}

std::string job_workdir(const std::string& run_dir) {
  std::string text = snapshot_record(run_dir);
  if (text.empty()) return "";
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("workdir") || !j["workdir"].is_string()) return "";
  return j["workdir"].get<std::string>();
}

std::string snapshot_summary(const std::string& run_dir) {
  std::string text = snapshot_record(run_dir);
  if (text.empty()) return "runs in place (no snapshot recorded)";
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return "snapshot.json is unreadable";
  if (j.contains("off")) return "runs in place: " + j.value("off", std::string());
  std::string id = j.value("id", std::string()).substr(0, 12);
  std::string where;
  if (j.value("mode", std::string()) == "git") {
    std::string commit = j["commit"].is_string() ? j["commit"].get<std::string>().substr(0, 12) : "";
    std::string branch = j["branch"].is_string() ? j["branch"].get<std::string>() : "";
    where = commit.empty() ? " (no commit yet)"
                           : fmt::format(" (commit {}{}{})", commit, branch.empty() ? "" : " on " + branch,
                                         j.value("dirty", false) ? ", with uncommitted changes" : "");
  } else {
    where = " (snapshot.paths)";
  }
  return fmt::format("snapshot {}{}: {} files, {}", id, where, j.value("files", 0LL),
                     format_bytes(j.value("bytes", 0LL)));
}

std::string code_label(const std::string& run_dir) {
  std::string text = snapshot_record(run_dir);
  if (text.empty()) return "";
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return "";
  if (j.contains("off")) return "in place";
  if (j.value("mode", std::string()) == "git" && j["commit"].is_string())
    return j["commit"].get<std::string>().substr(0, 12) + (j.value("dirty", false) ? "+" : "");
  return "snapshot:" + j.value("id", std::string()).substr(0, 12);
}

}  // namespace ddpctl
