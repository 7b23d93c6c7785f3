#include "slurm/slurm_answer.hpp"

#include <cstdlib>
#include <fmt/format.h>

namespace ddpctl {

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
