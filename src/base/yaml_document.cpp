#include "base/yaml_document.hpp"

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

}  // namespace ddpctl
