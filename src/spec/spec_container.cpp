#include "spec/spec_container.hpp"

#include <fmt/format.h>

#include "spec/spec_setup.hpp"
#include "base/text.hpp"
#include "base/values.hpp"

namespace ddpctl {

namespace {

// A mount: SRC[:DST[:ro|rw]], absolute paths or SRC relative to the submit folder.
std::optional<std::string> mount_problem(const std::string& m) {
  if (auto p = script_value_problem(m)) return p;
  std::vector<std::string> parts = split(m, ':');
  if (parts.size() > 3 || parts[0].empty())
    return "must be SOURCE[:TARGET[:ro]] (a path, the path inside the container, read-only)";
  if (parts.size() == 3 && parts[2] != "ro" && parts[2] != "rw") return "ends in '" + parts[2] + "': only ro or rw";
  if (parts.size() >= 2 && (parts[1].empty() || parts[1][0] != '/')) return "needs an absolute target path inside the container";
  if (m.find(',') != std::string::npos) return "has a comma, which Pyxis and Apptainer read as a list separator";
  return std::nullopt;
}

}  // namespace

void read_container_section(MapReader& top, ContainerSettings& c, bool profile) {
  if (!top.has("container")) return;
  c.present = true;
  c.where["container"] = top.where("container");
  YAML::Node node = top.node("container");
  if (node.IsScalar() && !profile) {
    if (auto on = top.boolean("container")) {
      if (*on) top.error("container", "true says nothing: give {image: ...} (the profile's runtime runs it), or false");
      c.off = !*on;
    }
    return;
  }
  MapReader r(top.document(), node, "container", top.diagnostics());
  if (!r.valid()) return;
  auto remember = [&](const char* key) {
    if (r.has(key)) c.where[std::string("container.") + key] = r.where(key);
  };
  for (const char* key : {"runtime", "image", "mounts", "workdir", "env", "options", "program"}) remember(key);
  auto runtime_check = [](const std::string& s) -> std::optional<std::string> {
    if (parse_runtime(s)) return std::nullopt;
    return fmt::format("is not a runtime ddpctl knows: {}{}", join(runtime_names(), ", "),
                       did_you_mean(s, runtime_names()));
  };
  if (auto v = r.string("runtime", runtime_check)) c.runtime = parse_runtime(*v);
  YAML::Node image = r.node("image");
  if (image.IsMap()) {
    // One image per runtime: the same spec runs at a Pyxis site and an Apptainer site.
    MapReader per(r.document(), image, "container.image", r.diagnostics());
    for (const auto& name : runtime_names())
      if (auto v = per.string(name, [](const std::string& s) { return script_value_problem(s); }))
        c.images[*parse_runtime(name)] = *v;
    per.finish();
  } else if (auto v = r.string("image", [](const std::string& s) { return script_value_problem(s); })) {
    c.image = *v;
  }
  if (auto v = r.string_list("mounts", mount_problem)) c.mounts = *v;
  if (auto v = r.string("workdir", [](const std::string& s) -> std::optional<std::string> {
        if (s.empty() || s[0] != '/') return "must be an absolute path inside the container";
        return script_value_problem(s);
      }))
    c.workdir = *v;
  if (auto env = r.string_map("env")) {
    for (const auto& [name, value] : *env) {
      if (!is_env_name(name))
        r.error("env", fmt::format("{} is not a valid variable name ([A-Za-z_][A-Za-z0-9_]*)", printable(name)));
      else if (auto reason = reserved_env_reason(name))
        r.error("env", fmt::format("{} {}", name, *reason));
      else if (auto problem = script_value_problem(value))
        r.error("env", fmt::format("{}: the value {}", name, *problem));
      else
        c.env.emplace_back(name, value);
    }
  }
  if (auto v = r.string_list("options", [](const std::string& s) { return script_value_problem(s); })) c.options = *v;
  if (auto v = r.string("program", [](const std::string& s) { return script_value_problem(s); })) c.program = *v;
  r.finish();
}

}  // namespace ddpctl
