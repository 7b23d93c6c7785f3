#include "shell.hpp"

#include <cctype>
#include <utility>

namespace ddpctl {

static bool is_safe(char c, bool first) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '_': case '-': case '+': case '.': case '/': case ':': case '@': case ',':
      return true;
    case '=': case '%':  // `=` first could read as an assignment in some contexts; `%` as job control
      return !first;
    default:
      return false;
  }
}

std::string shell_quote(std::string_view s) {
  bool safe = !s.empty();
  for (size_t i = 0; i < s.size() && safe; ++i) safe = is_safe(s[i], i == 0);
  if (safe) return std::string(s);
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  out += '\'';
  return out;
}

namespace {

// Where `$NAME` or `${NAME}` starts in `value` from `from`, and its length;
// `$NAMEX` (a longer name) is not it.
std::pair<size_t, size_t> find_self(const std::string& name, const std::string& value, size_t from) {
  for (size_t at = value.find('$', from); at != std::string::npos; at = value.find('$', at + 1)) {
    if (value.compare(at + 1, name.size() + 2, "{" + name + "}") == 0) return {at, name.size() + 3};
    if (value.compare(at + 1, name.size(), name) == 0) {
      size_t end = at + 1 + name.size();
      if (end == value.size() || !(std::isalnum(static_cast<unsigned char>(value[end])) || value[end] == '_'))
        return {at, name.size() + 1};
    }
  }
  return {std::string::npos, 0};
}

}  // namespace

bool refers_to_itself(const std::string& name, const std::string& value) {
  return find_self(name, value, 0).first != std::string::npos;
}

std::string shell_assignment_value(const std::string& name, const std::string& value) {
  auto [at, len] = find_self(name, value, 0);
  if (at == std::string::npos) return shell_quote(value);
  std::string before = value.substr(0, at), after = value.substr(at + len);
  // The common shapes: X:$NAME and $NAME:X, with the separator only when set.
  if (!before.empty() && before.back() == ':' && after.empty() && !refers_to_itself(name, before))
    return shell_quote(before.substr(0, before.size() - 1)) + "\"${" + name + ":+:$" + name + "}\"";
  if (before.empty() && !after.empty() && after.front() == ':' && !refers_to_itself(name, after))
    return "\"${" + name + ":+$" + name + ":}\"" + shell_quote(after.substr(1));
  std::string out;
  size_t from = 0;
  while (true) {
    auto [pos, n] = find_self(name, value, from);
    std::string piece = value.substr(from, pos == std::string::npos ? std::string::npos : pos - from);
    if (!piece.empty()) out += shell_quote(piece);
    if (pos == std::string::npos) break;
    out += "\"${" + name + ":-}\"";
    from = pos + n;
  }
  return out.empty() ? "''" : out;
}

std::string shell_join(const std::vector<std::string>& words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i) out += ' ';
    out += shell_quote(words[i]);
  }
  return out;
}

}  // namespace ddpctl
