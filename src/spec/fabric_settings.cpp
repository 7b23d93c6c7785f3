#include "spec/fabric_settings.hpp"

#include <cctype>
#include <fmt/format.h>

namespace ddpctl {

std::optional<long long> fabric_size_bytes(const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  std::string unit = text.substr(digits);
  long long scale = unit.empty() ? 1 : unit == "K" ? 1LL << 10 : unit == "M" ? 1LL << 20 : unit == "G" ? 1LL << 30 : 0;
  if (digits == 0 || digits > 9 || scale == 0) return std::nullopt;
  long long bytes = std::stoll(text.substr(0, digits)) * scale;
  if (bytes < 4) return std::nullopt;
  return bytes;
}

void read_fabric_check(MapReader& top, FabricCheckSettings& s) {
  if (!top.has("fabric_check")) return;
  s.where = top.where("fabric_check");
  YAML::Node node = top.node("fabric_check");
  if (node.IsScalar()) {
    s.enabled = top.boolean("fabric_check");
    return;
  }
  MapReader r(top.document(), node, "fabric_check", top.diagnostics());
  if (!r.valid()) return;
  if (auto v = r.boolean("enabled")) s.enabled = *v;
  // Fractions of the expected figure: 0 or less would never warn, 1 or more always.
  auto fraction = [&](const char* key) -> std::optional<double> {
    auto v = r.positive_number(key, 1);
    if (v && *v >= 1) {
      r.error(key, fmt::format("{} is not below 1: a fraction of the partition's busbw_gbs (0.8: 80%)", *v));
      return std::nullopt;
    }
    return v;
  };
  s.warn_below = fraction("warn_below");
  s.fail_below = fraction("fail_below");
  if (s.warn_below && s.fail_below && *s.fail_below > *s.warn_below)
    r.error("fail_below", fmt::format("{} is above warn_below ({}): a run below the failure level is also below the "
                                      "warning level", *s.fail_below, *s.warn_below));
  s.size = r.string("size", [](const std::string& t) -> std::optional<std::string> {
    auto b = fabric_size_bytes(t);
    if (!b) return "is not a size in bytes (e.g. 8M, 64M, 1G; K, M, G are 1024s; at least 4 bytes)";
    if (*b > (16LL << 30)) return "is more than 16G: the buffer is allocated twice on each rank";
    return std::nullopt;
  });
  if (auto v = r.integer("iters", 1, 1000)) s.iters = static_cast<int>(*v);
  if (auto v = r.span("timeout")) {
    if (*v < 5 || *v > 1800) r.error("timeout", "must be between 5s and 30m");
    else s.timeout_s = *v;
  }
  r.finish();
}

FabricCheckSettings merge_fabric_check(const FabricCheckSettings& profile, const FabricCheckSettings& spec) {
  FabricCheckSettings m = profile;
  if (spec.enabled) m.enabled = spec.enabled;
  if (spec.warn_below) m.warn_below = spec.warn_below;
  if (spec.fail_below) m.fail_below = spec.fail_below;
  if (spec.size) m.size = spec.size;
  if (spec.iters) m.iters = spec.iters;
  if (spec.timeout_s) m.timeout_s = spec.timeout_s;
  if (spec.where.line > 0) m.where = spec.where;
  return m;
}

}  // namespace ddpctl
