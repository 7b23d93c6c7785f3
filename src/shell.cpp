#include "shell.hpp"

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

std::string shell_join(const std::vector<std::string>& words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i) out += ' ';
    out += shell_quote(words[i]);
  }
  return out;
}

}  // namespace ddpctl
