#include "spec/spec_sites.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <map>

#include "base/ssh.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace {

std::optional<std::string> remote_dir_problem(const std::string& s) {
  if (s.find_first_not_of(" \t") == std::string::npos) return "must name a folder (relative: under the home there)";
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return "must not contain a control character";
  return std::nullopt;
}

std::string host_of(const YAML::Node& map, const std::string& fallback) {
  const YAML::Node& m = map;
  if (m.IsMap() && m["on"] && m["on"].IsScalar()) return m["on"].Scalar();
  return fallback;
}

// Merges mapping `from` into mapping `to`, key by key, deeper maps too.
void merge_map(YAML::Node to, const YAML::Node& from) {
  for (const auto& item : from) {
    const std::string key = item.first.Scalar();
    const YAML::Node& cto = to;
    if (cto[key] && cto[key].IsMap() && item.second.IsMap()) {
      merge_map(to[key], item.second);
    } else {
      to[key] = item.second;
    }
  }
}

}  // namespace

const std::vector<std::string>& site_keys() {
  static const std::vector<std::string> keys = {"cluster", "output_dir", "trainer", "command",  "env",
                                                "modules", "setup",      "nccl",    "container", "snapshot"};
  return keys;
}

void read_shape_host(MapReader& r, Shape& s, bool alternative) {
  if (auto v = r.string("on", [](const std::string& h) { return ssh_host_problem(h, "on:"); })) s.host = *v, s.where["on"] = r.where("on");
  if (auto v = r.string("remote_dir", remote_dir_problem)) s.remote_dir = *v, s.where["remote_dir"] = r.where("remote_dir");
  // A folder at a login host no shape goes to would be silently unused.
  if (r.has("remote_dir") && s.host.empty() && !r.has("on"))
    r.error("remote_dir", alternative ? "is the folder at a site's login host: it needs `on:` (here, or at the top "
                                        "level), the host whose folder it names"
                                      : "is the folder at the login host `on:` names: it needs `on:` beside it");
  if (!alternative) return;
  for (const auto& key : site_keys())
    if (r.has(key) && !r.has("on"))
      r.error(key, fmt::format("sets a site's own {}: it needs `on:`, the login host of that site (the shapes "
                               "submitted where the spec's top level says take {} from there)",
                               key, key));
}

YamlDocument site_view(const YamlDocument& doc, const std::string& host, Diagnostics& diags) {
  YamlDocument view = doc;
  view.root = copy_with_marks(doc.root);
  const std::string top_host = host_of(view.root, "");
  const YAML::Node& croot = view.root;
  if (!croot["alternatives"] || !croot["alternatives"].IsSequence()) return view;
  YAML::Node alts = view.root["alternatives"];
  std::map<std::string, std::pair<YAML::Node, size_t>> set;  // key -> value, the alternative that set it
  for (size_t i = 0; i < alts.size(); ++i) {
    YAML::Node alt = alts[i];
    if (!alt.IsMap() || !alt["on"] || host_of(alt, top_host) != host) continue;
    for (const auto& key : site_keys()) {
      const YAML::Node& calt = alt;
      if (!calt[key]) continue;
      YAML::Node value = calt[key];
      auto [it, fresh] = set.try_emplace(key, value, i);
      if (!fresh && !same_yaml_value(it->second.first, value))
        diags.error(doc.locate(fmt::format("alternatives[{}].{}", i, key), value),
                    fmt::format("alternatives[{}].{}", i, key),
                    fmt::format("differs from alternatives[{}].{}: the shapes of one site ({}) share it; set it "
                                "once, or make them the same",
                                it->second.second, key, printable(host)));
    }
  }
  // A site's program replaces the top level's, however each says it:
  // `command:` there and `trainer:` here (or the other way) are not both.
  if (set.count("command") && !set.count("trainer")) view.root.remove("trainer");
  if (set.count("trainer") && !set.count("command")) view.root.remove("command");
  for (const auto& [key, value] : set) {
    if (croot[key] && croot[key].IsMap() && value.first.IsMap())
      merge_map(view.root[key], value.first);
    else
      view.root[key] = value.first;
  }
  return view;
}

bool same_yaml_value(const YAML::Node& a, const YAML::Node& b) {
  if (a.Type() != b.Type()) return false;
  switch (a.Type()) {
    case YAML::NodeType::Scalar:
      return a.Scalar() == b.Scalar();
    case YAML::NodeType::Sequence:
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i)
        if (!same_yaml_value(a[i], b[i])) return false;
      return true;
    case YAML::NodeType::Map: {
      if (a.size() != b.size()) return false;
      for (const auto& item : a) {
        if (!item.first.IsScalar()) return false;
        const YAML::Node other = b[item.first.Scalar()];
        if (!other.IsDefined() || !same_yaml_value(item.second, other)) return false;
      }
      return true;
    }
    default:
      return true;  // both null, or both undefined
  }
}

std::vector<std::string> spec_hosts(const RunSpec& spec) {
  std::vector<std::string> hosts;
  for (const auto& s : spec.shapes)
    if (std::find(hosts.begin(), hosts.end(), s.host) == hosts.end()) hosts.push_back(s.host);
  return hosts;
}

std::string site_name(const std::string& host, const std::vector<std::string>& hosts) {
  auto short_of = [](const std::string& h) {
    if (h.empty()) return std::string("here");
    return h.substr(h.find('@') == std::string::npos ? 0 : h.find('@') + 1);
  };
  auto word = [](std::string s) {
    for (char& c : s)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
    return s.empty() ? std::string("_") : s;
  };
  std::string mine = short_of(host);
  for (const auto& other : hosts)
    if (other != host && short_of(other) == mine) return word(host.empty() ? "here" : host);
  return word(mine);
}

}  // namespace ddpctl

namespace ddpctl {

void check_site_names(const RunSpec& spec, Diagnostics& diags) {
  const std::vector<std::string> hosts = spec_hosts(spec);
  std::map<std::string, std::string> host_of_name;
  for (const auto& host : hosts) {
    if (host.empty()) continue;
    const Shape* first = nullptr;
    for (const auto& s : spec.shapes)
      if (s.host == host) {
        first = &s;
        break;
      }
    const Location where = first ? first->where_of("on", Location{}) : Location{};
    const std::string field = first ? first->field("on") : "on";
    const std::string name = site_name(host, hosts);
    if (name.size() > kMaxSiteName) {
      diags.error(where, field,
                  fmt::format("{} makes a site's name of {} bytes, too long for the files named after it here "
                              "(at most {}): name a shorter Host alias of your ~/.ssh/config",
                              printable(host, 40), name.size(), kMaxSiteName));
      continue;
    }
    auto [it, fresh] = host_of_name.emplace(name, host);
    if (!fresh)
      diags.error(where, field,
                  fmt::format("{} and {} would both be site {} (a site's name keeps letters, digits, '.', '_' and "
                              "'-'): two sites must have two names; name one by a Host alias of your ~/.ssh/config",
                              printable(it->second, 60), printable(host, 60), name));
  }
}

}  // namespace ddpctl
