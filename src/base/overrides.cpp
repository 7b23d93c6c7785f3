#include "base/overrides.hpp"

#include <fmt/format.h>
#include <optional>

#include "base/text.hpp"
#include "base/values.hpp"

namespace ddpctl {

namespace {

struct Segment {
  std::string key;  // map key, or empty for an index
  long long index = -1;
};

// "a.b[2].c" or "a.b.2.c" -> segments; the normalized form is "a.b[2].c".
bool split_path(const std::string& path, std::vector<Segment>* out, std::string* normalized) {
  std::string current;
  auto flush_key = [&]() -> bool {
    if (current.empty()) return false;
    std::string problem;
    if (auto idx = parse_int(current, 0, 1000000, &problem); idx && !out->empty()) {
      out->push_back({"", *idx});
      *normalized += fmt::format("[{}]", *idx);
    } else {
      out->push_back({current, -1});
      *normalized += (normalized->empty() ? "" : ".") + current;
    }
    current.clear();
    return true;
  };
  for (size_t i = 0; i < path.size(); ++i) {
    char c = path[i];
    if (c == '.') {
      if (!flush_key()) return false;
    } else if (c == '[') {
      if (!current.empty() && !flush_key()) return false;
      size_t close = path.find(']', i);
      if (close == std::string::npos) return false;
      current = path.substr(i + 1, close - i - 1);
      std::string problem;
      auto idx = parse_int(current, 0, 1000000, &problem);
      if (!idx || out->empty()) return false;
      out->push_back({"", *idx});
      *normalized += fmt::format("[{}]", *idx);
      current.clear();
      i = close;
      if (i + 1 < path.size() && path[i + 1] != '.' && path[i + 1] != '[') return false;
      if (i + 1 < path.size() && path[i + 1] == '.') ++i;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') {
      current += c;
    } else {
      return false;
    }
  }
  if (!current.empty()) flush_key();
  return !out->empty() && !(path.back() == '.');
}

// Sets the field `segments` names under `root` to `value`, making the
// mappings on the way; a problem in words when the path does not fit.
std::optional<std::string> set_field(YAML::Node root, const std::vector<Segment>& segments, const YAML::Node& value) {
  YAML::Node node;
  node.reset(root);
  std::string walked;
  for (size_t i = 0; i + 1 < segments.size(); ++i) {
    const Segment& s = segments[i];
    if (s.index >= 0) {
      if (!node.IsSequence() || static_cast<size_t>(s.index) >= node.size())
        return fmt::format("{} has no entry [{}]", walked, s.index);
      YAML::Node next = node[static_cast<size_t>(s.index)];
      node.reset(next);  // operator= would write through the reference
      walked += fmt::format("[{}]", s.index);
    } else {
      if (!node.IsMap()) return fmt::format("{} is not a mapping, so it has no field '{}'", walked, s.key);
      YAML::Node child = node[s.key];
      if (!child.IsDefined() || child.IsNull()) {
        node[s.key] = YAML::Node(YAML::NodeType::Map);
        child = node[s.key];
      }
      node.reset(child);
      walked += (walked.empty() ? "" : ".") + s.key;
    }
  }
  const Segment& last = segments.back();
  if (last.index >= 0) {
    if (!node.IsSequence() || static_cast<size_t>(last.index) >= node.size())
      return fmt::format("{} has no entry [{}]", walked, last.index);
    node[static_cast<size_t>(last.index)] = value;
  } else {
    if (!node.IsMap()) return fmt::format("{} is not a mapping, so it has no field '{}'", walked, last.key);
    node[last.key] = value;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> normalize_field_path(const std::string& path) {
  std::vector<Segment> segments;
  std::string normalized;
  if (!split_path(path, &segments, &normalized)) return std::nullopt;
  return normalized;
}

std::optional<std::string> set_field_path(YAML::Node root, const std::string& path, const YAML::Node& value) {
  std::vector<Segment> segments;
  std::string normalized;
  if (!split_path(path, &segments, &normalized))
    return fmt::format("'{}' is not a field path (use names joined by dots, e.g. trainer.lr)", path);
  return set_field(root, segments, value);
}

void apply_overrides(YamlDocument& doc, const std::vector<std::string>& sets) {
  Diagnostics diags;
  for (const std::string& set : sets) {
    Location origin{"--set " + set};
    if (auto problem = script_value_problem(set)) {
      diags.error(Location{"--set " + printable(set)}, "", *problem);
      continue;
    }
    size_t eq = set.find('=');
    if (eq == std::string::npos || eq == 0) {
      diags.error(origin, "", "expected KEY=VALUE, for example --set nodes=2 or --set trainer.epochs=3");
      continue;
    }
    std::string path = set.substr(0, eq), text = set.substr(eq + 1);
    std::vector<Segment> segments;
    std::string normalized;
    if (!split_path(path, &segments, &normalized)) {
      diags.error(origin, "", fmt::format("'{}' is not a field path (use names joined by dots, e.g. trainer.lr)", path));
      continue;
    }
    YAML::Node value;
    if (!text.empty() && (text[0] == '[' || text[0] == '{')) {
      try {
        value = YAML::Load(text);
      } catch (const YAML::Exception& e) {
        diags.error(origin, normalized, fmt::format("the value is not valid YAML flow syntax: {}", e.msg));
        continue;
      }
    } else if (!text.empty()) {
      value = YAML::Node(text);
    }  // else: null, which unsets the field

    if (auto problem = set_field(doc.root, segments, value)) {
      diags.error(origin, normalized, *problem);
      continue;
    }
    doc.overrides[normalized] = origin.file;
  }
  diags.throw_if_any();
}

}  // namespace ddpctl
