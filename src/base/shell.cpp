#include "base/shell.hpp"

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

namespace {

struct QuoteFrame {
  ShellQuoting quoting;
  char close;      // what ends it: " ' ) ` }; 0 for the line itself
  int parens = 0;  // ( ... ) inside a $( ) frame
  int cases = 0;   // case ... esac open in it: a pattern's `)` ends no $( )
};

bool starts_word(std::string_view s, size_t i) {
  return i == 0 || std::string_view(" \t;&|()<>").find(s[i - 1]) != std::string_view::npos;
}

bool ends_word(std::string_view s, size_t i) {
  return i >= s.size() || std::string_view(" \t;&|()<>").find(s[i]) != std::string_view::npos;
}

// The reserved word `word` stands at i (a word of its own).
bool word_at(std::string_view s, size_t i, std::string_view word) {
  return starts_word(s, i) && s.substr(i, word.size()) == word && ends_word(s, i + word.size());
}

}  // namespace

std::vector<ShellQuoting> shell_quoting_of(std::string_view s) {
  using Q = ShellQuoting;
  std::vector<Q> out(s.size(), Q::Unquoted);
  std::vector<QuoteFrame> stack{{Q::Unquoted, 0, 0}};
  // Inside ${...} quotes nest by other rules ("${x:-'a'}" keeps the ' ):
  // everything there, however quoted, is Parameter.
  int parameters = 0;
  auto push = [&](Q q, char ends_at) {
    stack.push_back({q, ends_at, 0});
    if (q == Q::Parameter) ++parameters;
  };
  auto pop = [&] {
    if (stack.back().quoting == Q::Parameter) --parameters;
    stack.pop_back();
  };
  auto same_for_next = [&](size_t& at) {  // an escaped or two-byte opening's second byte
    if (at + 1 < out.size()) out[at + 1] = out[at];
    ++at;
  };
  for (size_t i = 0; i < s.size(); ++i) {
    QuoteFrame& f = stack.back();  // not used after push(), which may move it
    const char c = s[i], next = i + 1 < s.size() ? s[i + 1] : '\0';
    out[i] = parameters > 0 ? Q::Parameter : f.quoting;
    if (f.quoting == Q::Single) {
      if (c == '\'') pop();
      continue;
    }
    if (c == '\\') {
      same_for_next(i);
      continue;
    }
    if (f.quoting == Q::AnsiC) {
      if (c == '\'') pop();
      continue;
    }
    if (c == '$' && (next == '(' || next == '{')) {
      same_for_next(i);
      push(next == '(' ? Q::Unquoted : Q::Parameter, next == '(' ? ')' : '}');
      continue;
    }
    if (c == '`') {
      if (f.close == '`') pop();
      else push(Q::Unquoted, '`');
      continue;
    }
    if (f.quoting == Q::Double) {
      if (c == '"') pop();
      continue;
    }
    // Outside quotes, or inside ${...}.
    if (c == '\'') {
      push(Q::Single, '\'');
    } else if (c == '"') {
      push(Q::Double, '"');
    } else if (c == '$' && next == '\'') {
      same_for_next(i);
      push(Q::AnsiC, '\'');
    } else if (c == '}' && f.close == '}') {
      pop();
    } else if (f.quoting == Q::Unquoted && word_at(s, i, "case")) {
      ++f.cases;
      i += 3;
    } else if (f.quoting == Q::Unquoted && f.cases > 0 && word_at(s, i, "esac")) {
      --f.cases;
      i += 3;
    } else if (c == '(' && f.close == ')') {
      ++f.parens;
    } else if (c == ')' && f.close == ')') {
      if (f.parens > 0) --f.parens;
      else if (f.cases == 0) pop();  // else a case pattern's end
    } else if (c == '#' && f.quoting == Q::Unquoted && starts_word(s, i)) {
      break;  // a comment: the rest of the line is unquoted
    }
  }
  return out;
}

namespace {

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// The end of what opens at `from` and closes with `close` (nested
// `open`...`close` counted); s.size() when it does not close.
size_t closing(std::string_view s, size_t from, std::string_view open, std::string_view close) {
  int depth = 1;
  for (size_t i = from; i < s.size(); ++i) {
    if (s.substr(i, open.size()) == open) {
      ++depth;
      i += open.size() - 1;
    } else if (s.substr(i, close.size()) == close) {
      if (--depth == 0) return i;
      i += close.size() - 1;
    }
  }
  return s.size();
}

// The end of the simple command that goes on at `from`.
size_t command_end(std::string_view s, size_t from) {
  size_t end = s.find_first_of(";&|\n", from);
  return end == std::string_view::npos ? s.size() : end;
}

}  // namespace

std::vector<bool> shell_arithmetic_of(std::string_view s) {
  std::vector<bool> out(s.size(), false);
  auto mark = [&](size_t from, size_t to) {
    for (size_t k = from; k < std::min(to, s.size()); ++k) out[k] = true;
  };
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.substr(i, 3) == "$((") {
      mark(i, closing(s, i + 3, "((", "))") + 2);
    } else if (s.substr(i, 2) == "$[") {
      mark(i, closing(s, i + 2, "[", "]") + 1);
    } else if (s.substr(i, 2) == "((") {
      mark(i, closing(s, i + 2, "((", "))") + 2);  // (( ... )), for (( ... ))
    } else if (s.substr(i, 2) == "[[" && starts_word(s, i)) {
      size_t end = closing(s, i + 2, "[[", "]]");
      std::string_view test = s.substr(i, end - i);
      for (std::string_view op : {"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
        for (size_t at = test.find(op); at != std::string_view::npos; at = test.find(op, at + 1))
          if (at > 0 && (test[at - 1] == ' ' || test[at - 1] == '\t') && ends_word(test, at + 3)) mark(i, end + 2);
    } else if (word_at(s, i, "let")) {
      mark(i, command_end(s, i));
    } else if (word_at(s, i, "declare") || word_at(s, i, "typeset") || word_at(s, i, "local") ||
               word_at(s, i, "readonly") || word_at(s, i, "export")) {
      // An integer variable's assignment is arithmetic: declare -i n=...
      size_t end = command_end(s, i);
      for (size_t k = i; k < end; ++k)
        if (s[k] == '-' && (k == 0 || s[k - 1] == ' ' || s[k - 1] == '\t')) {
          size_t w = k + 1;
          while (w < end && name_char(s[w])) ++w;
          if (s.substr(k + 1, w - k - 1).find('i') != std::string_view::npos) mark(i, end);
        }
    } else if (s[i] == '[' && i > 0 && (name_char(s[i - 1]) || s[i - 1] == '(')) {
      // An array's subscript (a[...]=, unset 'a[...]', (...[i]=v ...)).
      mark(i, closing(s, i + 1, "[", "]") + 1);
    }
  }
  return out;
}

bool plain_number(std::string_view s) {
  size_t i = s.size() > 1 && (s[0] == '-' || s[0] == '+') ? 1 : 0;
  size_t digits = 0, dots = 0;
  for (; i < s.size(); ++i) {
    if (s[i] >= '0' && s[i] <= '9') ++digits;
    else if (s[i] == '.' && ++dots == 1) continue;
    else return false;
  }
  return digits > 0 && digits <= 30;
}

std::optional<std::string> shell_variable_at(ShellQuoting q, const std::string& name) {
  const std::string expansion = "${" + name + "-}";
  switch (q) {
    case ShellQuoting::Unquoted: return "\"" + expansion + "\"";
    case ShellQuoting::Double: return expansion;
    case ShellQuoting::Single: return "'\"" + expansion + "\"'";
    case ShellQuoting::AnsiC: return "'\"" + expansion + "\"$'";
    case ShellQuoting::Parameter: return std::nullopt;
  }
  return std::nullopt;
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
