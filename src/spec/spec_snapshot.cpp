#include "spec/spec_snapshot.hpp"

#include <fmt/format.h>

namespace ddpctl {

void read_snapshot_section(MapReader& top, RunSpec& spec) {
  if (!top.has("snapshot")) return;
  auto& s = spec.snapshot;
  s.where = top.where("snapshot");
  YAML::Node node = top.node("snapshot");
  if (node.IsScalar()) {
    std::string v = node.Scalar();
    if (v == "git") {
      s.mode = SnapshotSettings::Mode::Git;
    } else if (auto on = top.boolean("snapshot")) {
      // true: as by default, but required (an error where it cannot be taken).
      s.mode = *on ? SnapshotSettings::Mode::Git : SnapshotSettings::Mode::Off;
    }
    return;
  }
  MapReader r(top.document(), node, "snapshot", top.diagnostics());
  if (!r.valid()) return;
  s.mode = SnapshotSettings::Mode::Git;
  if (auto v = r.string_list("paths")) {
    if (v->empty()) r.error("paths", "must name at least one file or folder");
    for (const auto& p : *v)
      if (!p.empty() && (p[0] == '/' || p.find("..") != std::string::npos))
        r.error("paths", fmt::format("{}: must be relative to the submit folder, inside it", p));
    s.paths = *v;
    s.mode = SnapshotSettings::Mode::Paths;
  }
  if (auto v = r.string_list("exclude")) s.exclude = *v;
  if (auto v = r.integer("max_mb", 1, 1000000)) s.max_bytes = *v << 20;
  r.finish();
}

}  // namespace ddpctl
