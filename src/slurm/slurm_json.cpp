// The readers' common ground (slurm_json.hpp) and the --json documents' own
// `meta`: which Slurm and which data parser wrote them.
#include "slurm/slurm_json.hpp"

#include <cstdlib>
#include <ctime>
#include <fmt/format.h>

#include "base/values.hpp"

namespace ddpctl {

namespace slurm_json {

std::optional<long long> parse_slurm_date(const std::string& s) {
  std::tm tm{};
  const char* end = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (!end || *end) return std::nullopt;
  tm.tm_isdst = -1;
  return static_cast<long long>(std::mktime(&tm));
}

std::optional<long long> parse_limit(const std::string& s) {
  std::string problem;
  if (s.empty() || s == "UNLIMITED" || s == "N/A" || s == "Partition_Limit") return std::nullopt;
  return parse_slurm_time(s, &problem);
}

int to_int(const std::string& s) {
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  return end && end != s.c_str() ? static_cast<int>(v) : 0;
}

// --json answers "exit 0, errors: [...]" when the controller cannot be asked.
void throw_json_errors(const json& doc) {
  auto it = doc.find("errors");
  if (it == doc.end() || !it->is_array() || it->empty()) return;
  const json& e = it->front();
  auto text = [&e](const char* key) {
    auto v = e.find(key);
    return v != e.end() && v->is_string() ? v->get<std::string>() : std::string();
  };
  std::string what = text("description");
  std::string detail = text("error");
  std::string source = text("source");
  if (what.empty()) what = detail, detail.clear();
  if (!source.empty()) detail = source + (detail.empty() ? "" : ": " + detail);
  std::string msg = detail.empty() ? what : what + " (" + detail + ")";
  // 22.05 says only "Unspecified error" when slurmctld does not answer.
  if (msg.find("Unspecified error") != std::string::npos) msg += "; is slurmctld up? try `scontrol ping`";
  throw SlurmAnswerError(msg);
}

json parse_document(const std::string& text, const std::string& command) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw SlurmFormatError(fmt::format("cannot read {}: not JSON ({})", command, e.what()));
  }
}

}  // namespace slurm_json

using nlohmann::json;

std::string JsonSource::describe() const {
  std::string slurm = release.empty() ? "Slurm (release not given)" : "Slurm " + release;
  return parser ? fmt::format("{} (data_parser v0.0.{})", slurm, parser) : slurm;
}

JsonSource json_source(const json& doc, const std::string& command) {
  JsonSource src;
  const json* meta = doc.contains("meta") && doc["meta"].is_object() ? &doc["meta"] : nullptr;
  if (!meta) throw SlurmFormatError(fmt::format("cannot read {}: it has no \"meta\" saying which Slurm wrote it", command));
  // 22.05: meta.Slurm.release and meta.plugin.type "openapi/v0.0.38";
  // 23.02: meta.Slurm and meta.plugins.data_parser; 23.11+: meta.slurm and
  // meta.plugin.data_parser ("data_parser/v0.0.42").
  for (const char* key : {"slurm", "Slurm"})
    if (auto it = meta->find(key); it != meta->end() && it->is_object()) {
      auto rel = it->find("release");
      if (rel != it->end() && rel->is_string()) src.release = rel->get<std::string>();
    }
  std::string plugin;
  for (const char* group : {"plugin", "plugins"})
    if (auto it = meta->find(group); it != meta->end() && it->is_object())
      for (const char* key : {"data_parser", "type"})
        if (auto v = it->find(key); plugin.empty() && v != it->end() && v->is_string() && !v->get<std::string>().empty())
          plugin = v->get<std::string>();
  auto at = plugin.rfind("v0.0.");
  if (at != std::string::npos) src.parser = std::atoi(plugin.c_str() + at + 5);
  if (src.parser < 37)
    throw SlurmFormatError(fmt::format("cannot read {} of {}: its meta names no data parser ddpctl knows ({}); "
                                       "ddpctl reads Slurm 22.05 to 26.05 (data parsers v0.0.38 to v0.0.45)",
                                       command, src.describe(), plugin.empty() ? "none" : "\"" + plugin + "\""));
  return src;
}

bool sinfo_lists_nodes(const JsonSource& source) { return source.parser <= 38; }

}  // namespace ddpctl
