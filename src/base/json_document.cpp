#include "base/json_document.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>

#include "base/files.hpp"
#include "base/paths.hpp"
#include "base/text.hpp"
#include "base/version.hpp"

namespace ddpctl {

std::string json_schema_id(const std::string& kind, int major) { return fmt::format("ddpctl.{}/{}", kind, major); }

nlohmann::json json_document(const std::string& kind, int major) {
  return {{"schema", json_schema_id(kind, major)},
          {"ddpctl", {{"version", ddpctl_version_number()}, {"commit", ddpctl_commit()}}},
          {"errors", nlohmann::json::array()},
          {"warnings", nlohmann::json::array()}};
}

nlohmann::json diagnostic_json(const Diagnostic& d) {
  nlohmann::json j = {{"message", d.message}};
  if (!d.where.file.empty()) j["file"] = d.where.file;
  if (d.where.line > 0) j["line"] = d.where.line;
  if (d.where.line > 0 && d.where.column > 0) j["column"] = d.where.column;
  if (!d.field.empty()) j["field"] = d.field;
  j["text"] = d.str();
  return j;
}

nlohmann::json error_document(const std::vector<Diagnostic>& errors, int exit_code) {
  nlohmann::json doc = json_document("error");
  for (const auto& d : errors) doc["errors"].push_back(diagnostic_json(d));
  doc["exit"] = exit_code;
  return doc;
}

int json_major_asked(const std::vector<std::string>& words) {
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "--") break;
    if (w == "--json") return kJsonMajor;
    if (w.rfind("--json=", 0) == 0) {
      const std::string n = w.substr(7);
      return n.size() == 1 && n[0] >= '0' && n[0] <= '9' ? n[0] - '0' : kJsonMajor;
    }
    // report's --format json: its bare rows, as before the envelope.
    if ((w == "--format" && i + 1 < words.size() && words[i + 1] == "json") || w == "--format=json") return 0;
  }
  return -1;
}

std::string json_schema_dir() { return data_dir() + "/schemas"; }

std::vector<std::string> json_schema_kinds() {
  std::vector<std::string> kinds;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(json_schema_dir(), ec)) {
    const std::string name = e.path().filename().string();  // ddpctl.status.1.json
    if (name.rfind("ddpctl.", 0) != 0 || name.size() < 13 || name.compare(name.size() - 5, 5, ".json") != 0) continue;
    const std::string stem = name.substr(7, name.size() - 12);  // status.1
    const size_t dot = stem.rfind('.');
    if (dot == std::string::npos || stem.substr(0, dot) == "envelope") continue;
    kinds.push_back(stem.substr(0, dot) + "/" + stem.substr(dot + 1));
  }
  std::sort(kinds.begin(), kinds.end());
  return kinds;
}

std::string json_schema_text(const std::string& asked) {
  std::string kind = asked.rfind("ddpctl.", 0) == 0 ? asked.substr(7) : asked;
  const std::vector<std::string> kinds = json_schema_kinds();
  if (kind.find('/') == std::string::npos) {
    int newest = 0;
    for (const auto& k : kinds)
      if (k.compare(0, kind.size() + 1, kind + "/") == 0) newest = std::max(newest, std::atoi(k.c_str() + kind.size() + 1));
    kind += "/" + std::to_string(newest);
  }
  if (kind == "envelope/1" || std::find(kinds.begin(), kinds.end(), kind) != kinds.end()) {
    const std::string name = kind.substr(0, kind.find('/')) + "." + kind.substr(kind.find('/') + 1);
    return read_file(json_schema_dir() + "/ddpctl." + name + ".json");
  }
  std::vector<std::string> names;
  for (const auto& k : kinds) names.push_back(k.substr(0, k.find('/')));
  throw UserError(Location{"KIND"}, "",
                  fmt::format("{}: no such document kind{}; the kinds: {} (in {})", printable(asked),
                              did_you_mean(asked, names), join(names, ", "), json_schema_dir()));
}

}  // namespace ddpctl
