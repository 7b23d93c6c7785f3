#include "base/yaml_reader.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "base/files.hpp"
#include "base/text.hpp"
#include "base/values.hpp"

namespace ddpctl {
struct MarkSetter;
}  // namespace ddpctl

// yaml-cpp sets a node's mark only in its parser and has no call to set one;
// Node lets the as_if family in (a friend template), so this one does it.
template <>
struct YAML::as_if<ddpctl::MarkSetter, ddpctl::MarkSetter> {
  static void set(YAML::Node& node, const YAML::Mark& mark) {
    node.EnsureNodeExists();
    node.m_pNode->set_mark(mark);
  }
};

namespace ddpctl {

namespace {

Location position_of(const std::string& file, const std::string& text, size_t offset) {
  int line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') ++line, column = 1;
    else ++column;
  }
  return {file, line, column};
}

bool is_prefix_path(const std::string& prefix, const std::string& path) {
  if (path.size() < prefix.size() || path.compare(0, prefix.size(), prefix) != 0) return false;
  return path.size() == prefix.size() || path[prefix.size()] == '.' || path[prefix.size()] == '[';
}

// yaml-cpp reads a key of more than 1,024 characters (YAML's limit on an
// implicit key) as no key at all, and says only "end of map flow not found"
// or "illegal map value": after such an error, the first key that long,
// where it starts, and the field it is in ("" at the top).
struct LongKey {
  size_t at = 0, length = 0;
  std::string field;
};
constexpr size_t kMaxYamlKey = 1024;

std::string key_name_before_colon(const std::string& line, size_t colon) {
  size_t start = line.find_last_of("{,", colon);
  start = start == std::string::npos ? 0 : start + 1;
  std::string key = trim(line.substr(start, colon - start));
  if (key.rfind("- ", 0) == 0) key = trim(key.substr(2));
  return key;
}

std::optional<LongKey> find_long_key(const std::string& text) {
  size_t line_start = 0, stretch = 0;  // where the line and the would-be key begin
  for (size_t colon = 0; colon < text.size(); ++colon) {
    char c = text[colon];
    if (c == '\n') line_start = stretch = colon + 1;
    if (c == '{' || c == ',' || c == '[') stretch = colon + 1;
    if (c != ':') continue;
    char next = colon + 1 < text.size() ? text[colon + 1] : '\n';
    if (next != ' ' && next != '\n' && next != '\r' && next != ',' && next != '}') continue;
    size_t start = stretch;
    stretch = colon + 1;  // the value's stretch begins
    while (start < colon && text[start] == ' ') ++start;
    if (text.compare(start, 2, "- ") == 0) start = text.find_first_not_of(' ', start + 2);
    if (colon - start <= kMaxYamlKey) continue;
    LongKey k{start, colon - start, ""};
    // The field it is in: "NAME: {" before it on its line, else the nearest
    // line above that is indented less and ends in "NAME:".
    std::string line = text.substr(line_start, start - line_start);
    size_t brace = line.rfind('{');
    if (brace != std::string::npos) {
      size_t key_colon = line.rfind(':', brace);
      if (key_colon != std::string::npos) k.field = key_name_before_colon(line, key_colon);
      return k;
    }
    size_t indent = std::min(line.find_first_not_of(' '), line.size());
    if (indent == 0) return k;
    std::vector<std::string> above = split(text.substr(0, line_start), '\n');
    for (auto it = above.rbegin(); it != above.rend(); ++it) {
      size_t ind = it->find_first_not_of(' ');
      if (ind == std::string::npos || (*it)[ind] == '#' || ind >= indent) continue;
      std::string t = trim(*it);
      if (!t.empty() && t.back() == ':') k.field = key_name_before_colon(t, t.size() - 1);
      break;
    }
    return k;
  }
  return std::nullopt;
}

}  // namespace

Location YamlDocument::locate(const std::string& field_path, const YAML::Node& node) const {
  for (const auto& [path, origin] : overrides)
    if (is_prefix_path(path, field_path)) return Location{origin};
  if (node.IsDefined()) {
    YAML::Mark m = node.Mark();
    if (!m.is_null()) return Location{file, m.line + 1, m.column + 1};
  }
  return Location{file};
}

YamlDocument parse_yaml_document(const std::string& file, const std::string& raw, const std::string& what) {
  std::string text = raw;
  if (text.size() >= 2 && ((text[0] == '\xff' && text[1] == '\xfe') || (text[0] == '\xfe' && text[1] == '\xff')))
    throw UserError(Location{file, 1, 1}, "", fmt::format("{} is UTF-16; save it as UTF-8", what));
  if (text.compare(0, 3, "\xef\xbb\xbf") == 0) text.erase(0, 3);  // a UTF-8 byte-order mark is harmless
  if (auto bad = find_invalid_utf8(text))
    throw UserError(position_of(file, text, *bad), "", fmt::format("{} is not valid UTF-8 here", what));
  if (auto nul = text.find('\0'); nul != std::string::npos)
    throw UserError(position_of(file, text, nul), "", fmt::format("{} contains a NUL byte", what));

  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    Location where{file, e.mark.is_null() ? 0 : e.mark.line + 1, e.mark.is_null() ? 0 : e.mark.column + 1};
    std::string msg = e.msg;
    if (msg == "bad file") msg = "nesting is too deep or the document is malformed";
    std::string hint;
    if (!e.mark.is_null()) {
      // Tabs are the commonest cause of puzzling YAML errors: say so.
      size_t line_start = 0;
      for (int l = 0; l < e.mark.line && line_start != std::string::npos; ++l) {
        line_start = text.find('\n', line_start);
        if (line_start != std::string::npos) ++line_start;
      }
      if (line_start != std::string::npos) {
        std::string line = text.substr(line_start, text.find('\n', line_start) - line_start);
        if (line.find('\t') != std::string::npos) hint = " (this line contains a tab; YAML indents with spaces only)";
      }
    }
    if (auto key = find_long_key(text)) {
      Location at = position_of(file, text, key->at);
      throw UserError(at, key->field,
                      fmt::format("a key of {} characters ({}): YAML reads keys of at most {} characters (the "
                                  "parser's limit on a key without '?'), so this one is not read as a key",
                                  key->length, printable(std::string_view(text).substr(key->at, key->length), 30),
                                  kMaxYamlKey));
    }
    throw UserError(where, "", fmt::format("YAML syntax error: {}{}", msg, hint));
  }
  if (docs.empty() || docs[0].IsNull())
    throw UserError(Location{file}, "", fmt::format("{} is empty: expected a mapping of fields", what));
  if (docs.size() > 1) {
    YAML::Mark m = docs[1].Mark();
    throw UserError(Location{file, m.line + 1, m.column + 1}, "",
                    fmt::format("{} holds {} YAML documents; it must be exactly one (remove the '---' separators)",
                                what, docs.size()));
  }
  if (!docs[0].IsMap()) {
    YAML::Mark m = docs[0].Mark();
    throw UserError(Location{file, m.line + 1, m.column + 1}, "",
                    fmt::format("{} must be a mapping of fields, not {}", what, describe_node(docs[0])));
  }
  return YamlDocument{file, docs[0], {}};
}

YamlDocument load_yaml_file(const std::string& path, const std::string& what) {
  return parse_yaml_document(path, read_file(path), what);
}

YAML::Node copy_with_marks(const YAML::Node& from) {
  YAML::Node to;
  switch (from.Type()) {
    case YAML::NodeType::Undefined:
      return to;
    case YAML::NodeType::Null:
      to = YAML::Node(YAML::NodeType::Null);
      break;
    case YAML::NodeType::Scalar:
      to = YAML::Node(from.Scalar());
      break;
    case YAML::NodeType::Sequence:
      to = YAML::Node(YAML::NodeType::Sequence);
      for (const auto& item : from) to.push_back(copy_with_marks(item));
      break;
    case YAML::NodeType::Map:
      to = YAML::Node(YAML::NodeType::Map);
      for (auto it = from.begin(); it != from.end(); ++it)
        to.force_insert(copy_with_marks(it->first), copy_with_marks(it->second));
      break;
  }
  to.SetTag(from.Tag());
  to.SetStyle(from.Style());
  YAML::as_if<MarkSetter, MarkSetter>::set(to, from.Mark());
  return to;
}

std::string describe_node(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: return fmt::format("the value {}", printable(node.Scalar()));
    case YAML::NodeType::Null: return "nothing (null)";
    default: return "nothing";
  }
}

std::optional<std::string> read_scalar(const YamlDocument& doc, const YAML::Node& node, const std::string& field,
                                       Diagnostics& diags, bool allow_tab) {
  if (!node.IsScalar()) {
    // An unquoted "key: value" inside a line is the usual way to get a mapping here.
    std::string hint = node.IsMap() ? " (an unquoted ': ' starts a mapping in YAML; put the whole value in quotes)" : "";
    diags.error(doc.locate(field, node), field,
                fmt::format("expected a single value, got {}{}", describe_node(node), hint));
    return std::nullopt;
  }
  const std::string& s = node.Scalar();
  if (auto problem = script_value_problem(s, allow_tab)) {
    diags.error(doc.locate(field, node), field, *problem);
    return std::nullopt;
  }
  return s;
}

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
