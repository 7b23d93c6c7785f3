#include "base/yaml_reader.hpp"

#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>

#include "base/regex.hpp"
#include "base/text.hpp"
#include "base/values.hpp"

namespace ddpctl {

MapReader::MapReader(const YamlDocument& doc, YAML::Node node, std::string path, Diagnostics& diags)
    : doc_(doc), node_(node), path_(std::move(path)), diags_(diags) {
  if (!node_.IsMap()) {
    diags_.error(doc_.locate(path_, node_), path_, fmt::format("expected a mapping of fields, got {}", describe_node(node_)));
    valid_ = false;
    return;
  }
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    Entry e;
    e.key_node = it->first;
    e.value = it->second;
    if (!it->first.IsScalar()) {
      diags_.error(doc_.locate(path_, it->first), path_,
                   fmt::format("keys must be plain names, got {}", describe_node(it->first)));
      e.used = true;  // reported already
    } else {
      e.key = it->first.Scalar();
    }
    entries_.push_back(std::move(e));
  }
}

std::string MapReader::field(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

MapReader::Entry* MapReader::find(const std::string& key) {
  if (std::find(asked_.begin(), asked_.end(), key) == asked_.end()) asked_.push_back(key);
  Entry* found = nullptr;
  for (auto& e : entries_) {
    if (e.key == key && !e.key.empty()) {
      e.used = true;
      if (!found) found = &e;
    }
  }
  return found;
}

bool MapReader::has(const std::string& key) {
  Entry* e = find(key);
  return e && e->value.IsDefined() && !e->value.IsNull();
}

YAML::Node MapReader::node(const std::string& key) {
  Entry* e = find(key);
  return e ? e->value : YAML::Node(YAML::NodeType::Undefined);
}

Location MapReader::where(const std::string& key) const {
  for (const auto& e : entries_) {
    if (e.key == key) return doc_.locate(field(key), e.value.IsNull() ? e.key_node : e.value);
  }
  return doc_.locate(field(key), node_);
}

Location MapReader::self() const { return doc_.locate(path_, node_); }

void MapReader::error(const std::string& key, std::string message) {
  diags_.error(where(key), field(key), std::move(message));
}

std::optional<std::string> MapReader::scalar(const std::string& key, bool allow_tab) {
  if (!has(key)) return std::nullopt;
  return read_scalar(doc_, node(key), field(key), diags_, allow_tab);
}

std::optional<std::string> MapReader::string(const std::string& key, const StringCheck& check) {
  auto s = scalar(key);
  if (!s) return std::nullopt;
  if (check) {
    if (auto problem = check(*s)) {
      error(key, fmt::format("{} {}", printable(*s), *problem));
      return std::nullopt;
    }
  }
  return s;
}

template <class T, class Parse>
std::optional<T> MapReader::parsed(const std::string& key, Parse parse) {
  auto s = scalar(key);
  if (!s) return std::nullopt;
  std::string problem;
  std::optional<T> v = parse(*s, &problem);
  if (!v) error(key, fmt::format("{} {}", printable(*s), problem));
  return v;
}

std::optional<long long> MapReader::integer(const std::string& key, long long min, long long max) {
  return parsed<long long>(key, [&](const std::string& s, std::string* p) { return parse_int(s, min, max, p); });
}

std::optional<bool> MapReader::boolean(const std::string& key) { return parsed<bool>(key, parse_bool); }

std::optional<double> MapReader::positive_number(const std::string& key, double max) {
  return parsed<double>(key, [max](const std::string& s, std::string* problem) -> std::optional<double> {
    // A sign is read, so that a negative figure is out of range, not "not a number".
    static const Regex decimal("[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?");
    if (!decimal.full_match(s)) {
      *problem = "is not a number";
      return std::nullopt;
    }
    double v = std::strtod(s.c_str(), nullptr);
    if (!(v > 0) || v > max) {
      *problem = fmt::format("is out of range: above 0 and at most {}", max);
      return std::nullopt;
    }
    return v;
  });
}

std::optional<long long> MapReader::memory_mib(const std::string& key) {
  return parsed<long long>(key, parse_memory_mib);
}

std::optional<long long> MapReader::slurm_time(const std::string& key) {
  return parsed<long long>(key, parse_slurm_time);
}

std::optional<long long> MapReader::span(const std::string& key) { return parsed<long long>(key, parse_span); }

std::optional<std::vector<std::string>> MapReader::string_list(const std::string& key, const StringCheck& check,
                                                               bool allow_tab) {
  if (!has(key)) return std::nullopt;
  YAML::Node list = node(key);
  if (!list.IsSequence()) {
    error(key, fmt::format("expected a list, got {}", describe_node(list)));
    return std::nullopt;
  }
  std::vector<std::string> out;
  bool ok = true;
  for (size_t i = 0; i < list.size(); ++i) {
    std::string item_field = fmt::format("{}[{}]", field(key), i);
    auto s = read_scalar(doc_, list[i], item_field, diags_, allow_tab);
    if (!s) {
      ok = false;
      continue;
    }
    if (check) {
      if (auto problem = check(*s)) {
        diags_.error(doc_.locate(item_field, list[i]), item_field, fmt::format("{} {}", printable(*s), *problem));
        ok = false;
        continue;
      }
    }
    out.push_back(*s);
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<std::vector<std::pair<std::string, std::string>>> MapReader::string_map(const std::string& key) {
  if (!has(key)) return std::nullopt;
  MapReader sub(doc_, node(key), field(key), diags_);
  if (!sub.valid()) return std::nullopt;
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& e : sub.entries_) {
    if (e.key.empty()) continue;
    e.used = true;
    if (auto problem = script_value_problem(e.key)) {
      diags_.error(doc_.locate(sub.field("?"), e.key_node), field(key), "a key " + *problem);
      continue;
    }
    std::string f = sub.field(e.key);
    if (e.value.IsNull()) {
      out.emplace_back(e.key, "");
      continue;
    }
    if (auto v = read_scalar(doc_, e.value, f, diags_)) out.emplace_back(e.key, *v);
  }
  sub.finish();
  return out;
}

std::vector<std::pair<std::string, YAML::Node>> MapReader::entries(const std::string& key) {
  std::vector<std::pair<std::string, YAML::Node>> out;
  if (!has(key)) return out;
  MapReader sub(doc_, node(key), field(key), diags_);
  if (!sub.valid()) return out;
  for (auto& e : sub.entries_) {
    if (e.key.empty()) continue;
    e.used = true;
    if (auto problem = script_value_problem(e.key)) {
      diags_.error(doc_.locate(field(key), e.key_node), field(key), "a key " + *problem);
      continue;
    }
    out.emplace_back(e.key, e.value);
  }
  sub.finish();
  return out;
}

void MapReader::finish() {
  if (!valid_) return;
  std::map<std::string, const Entry*> first;
  for (const auto& e : entries_) {
    if (e.key.empty() && e.used) continue;
    Location at = doc_.locate(field(e.key), e.key_node);
    // A key a grid's cell set (grid.hpp) has no line of its own: its value's.
    if (at.line == 0 && e.value.IsDefined()) at = doc_.locate(field(e.key), e.value);
    if (auto [it, inserted] = first.emplace(e.key, &e); !inserted) {
      YAML::Mark m = it->second->key_node.Mark();
      diags_.error(at, field(e.key), fmt::format("duplicate key (first set on line {})", m.line + 1));
      continue;
    }
    if (!e.used) {
      std::string shown = script_value_problem(e.key) ? printable(e.key) : "'" + e.key + "'";
      diags_.error(at, path_, fmt::format("unknown field {}{}", shown, did_you_mean(e.key, asked_)));
    }
  }
}

}  // namespace ddpctl
