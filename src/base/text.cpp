#include "base/text.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>
#include <sstream>

namespace ddpctl {

namespace {

// Decodes one UTF-8 sequence at s[i]; returns its length, or 0 if invalid.
size_t utf8_sequence(std::string_view s, size_t i, char32_t* cp) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  size_t len;
  char32_t v;
  if (c < 0x80) {
    *cp = c;
    return 1;
  } else if ((c & 0xE0) == 0xC0) {
    len = 2, v = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3, v = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4, v = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    v = (v << 6) | (b(i + k) & 0x3F);
  }
  static constexpr char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (v < kMin[len] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *cp = v;
  return len;
}

}  // namespace

std::optional<size_t> find_invalid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    char32_t cp;
    size_t n = utf8_sequence(s, i, &cp);
    if (n == 0) return i;
    i += n;
  }
  return std::nullopt;
}

std::optional<size_t> find_control_char(std::string_view s, bool allow_tab) {
  for (size_t i = 0; i < s.size();) {
    char32_t cp;
    size_t n = utf8_sequence(s, i, &cp);
    if (n == 0) return i;  // not reached for valid UTF-8
    bool control = cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F);
    if (control && !(allow_tab && cp == '\t')) return i;
    i += n;
  }
  return std::nullopt;
}

std::optional<std::string> script_value_problem(std::string_view s, bool allow_tab) {
  // Linux passes at most MAX_ARG_STRLEN (32 pages, 128 KiB with the final
  // NUL) in one argument or environment string: a longer value makes every
  // command of the job fail with "Argument list too long".
  constexpr size_t kMaxArgBytes = 131072;
  if (s.size() >= kMaxArgBytes)
    return fmt::format("is {} bytes; Linux passes at most 128 KiB ({} bytes) in one argument or environment "
                       "variable, and every command of the job would fail with \"Argument list too long\"",
                       s.size(), kMaxArgBytes - 1);
  if (auto at = find_invalid_utf8(s)) {
    return fmt::format("is not valid UTF-8 (byte {} of the value)", *at + 1);
  }
  if (auto at = find_control_char(s, allow_tab)) {
    unsigned char c = static_cast<unsigned char>(s[*at]);
    std::string what = c == '\n' ? "a newline" : c == '\r' ? "a carriage return" : c == '\t' ? "a tab"
                                                                                              : "a control character";
    return fmt::format("contains {} (byte {} of the value); values that reach a script must be a single line "
                       "without control characters",
                       what, *at + 1);
  }
  return std::nullopt;
}

// Optimal string alignment distance: Levenshtein plus adjacent transpositions,
// the commonest typo ("gne" for "gen").
static size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  if (word.empty() || word.size() > 200) return std::nullopt;
  std::optional<std::string> best;
  size_t best_distance = SIZE_MAX;
  for (const auto& c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best_distance) best_distance = d, best = c;
  }
  // A third of the longer word, at least 1 and at most 3 edits away.
  size_t limit = std::clamp<size_t>(std::max(word.size(), best ? best->size() : 0) / 3, 1, 3);
  if (best && best_distance <= limit) return best;
  return std::nullopt;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  if (auto m = closest_match(word, candidates)) return fmt::format(" (did you mean '{}'?)", *m);
  return "";
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t b = 0;
  for (size_t e = s.find(sep); e != std::string::npos; e = s.find(sep, b)) {
    parts.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  if (!s.empty()) parts.push_back(s.substr(b));
  return parts;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> split_ws(const std::string& s) {
  std::vector<std::string> words;
  size_t b = s.find_first_not_of(" \t");
  while (b != std::string::npos) {
    size_t e = s.find_first_of(" \t", b);
    words.push_back(s.substr(b, e == std::string::npos ? std::string::npos : e - b));
    b = e == std::string::npos ? e : s.find_first_not_of(" \t", e);
  }
  return words;
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

std::string quoted_list(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += i + 1 == items.size() ? " or " : ", ";
    out += "'" + items[i] + "'";
  }
  return out;
}

std::string printable(std::string_view s, size_t max_len) {
  std::string out = "'";
  size_t shown = 0;
  for (size_t i = 0; i < s.size();) {
    if (shown++ >= max_len) {
      out += "...";
      break;
    }
    char32_t cp;
    size_t n = utf8_sequence(s, i, &cp);
    if (n == 0) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(s[i++]));
    } else if (cp == '\n') {
      out += "\\n", i += n;
    } else if (cp == '\t') {
      out += "\\t", i += n;
    } else if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F)) {
      out += fmt::format("\\u{{{:04x}}}", static_cast<unsigned>(cp)), i += n;
    } else {
      out.append(s.substr(i, n)), i += n;
    }
  }
  return out + "'";
}

std::string plain_line(std::string_view s, size_t max_len) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (out.size() >= max_len) {
      out += "...";
      break;
    }
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out += (c < 0x20 || c == 0x7f) ? '?' : static_cast<char>(c);
      ++i;
      continue;
    }
    // A whole UTF-8 character passes, but a C1 control (U+0080-U+009F: a
    // terminal reads U+009B as CSI) and a byte that begins none are '?'.
    const size_t n = c >= 0xF0 && c < 0xF5 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
    if (n == 0 || i + n > s.size() || find_invalid_utf8(s.substr(i, n)) ||
        (c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0)) {
      out += '?';
      i += n == 0 || i + n > s.size() || find_invalid_utf8(s.substr(i, n)) ? 1 : n;
      continue;
    }
    out.append(s.substr(i, n));
    i += n;
  }
  return out;
}

std::vector<std::string> format_columns(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], row[i].size());
    }
  std::vector<std::string> out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += i + 1 == row.size() ? row[i] : fmt::format("{:<{}}  ", row[i], width[i]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out.push_back(line);
  }
  return out;
}

std::vector<std::string> expand_hostlist(const std::string& list) {
  std::vector<std::string> out;
  std::string item;
  int depth = 0;
  std::vector<std::string> items;
  for (char c : list) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) {
      items.push_back(item);
      item.clear();
    } else {
      item += c;
    }
  }
  if (!item.empty()) items.push_back(item);
  for (const auto& it : items) {
    auto open = it.find('['), close = it.find(']');
    if (open == std::string::npos || close == std::string::npos || close < open) {
      out.push_back(it);
      continue;
    }
    std::string prefix = it.substr(0, open), suffix = it.substr(close + 1);
    std::stringstream ranges(it.substr(open + 1, close - open - 1));
    for (std::string range; std::getline(ranges, range, ',');) {
      auto dash = range.find('-');
      std::string lo = range.substr(0, dash), hi = dash == std::string::npos ? lo : range.substr(dash + 1);
      if (lo.empty() || hi.empty() || !std::all_of(lo.begin(), lo.end(), ::isdigit) ||
          !std::all_of(hi.begin(), hi.end(), ::isdigit) || lo.size() > 9 || hi.size() > 9)
        continue;
      for (long n = std::stol(lo); n <= std::stol(hi) && out.size() < 100000; ++n) {
        std::string num = std::to_string(n);
        if (num.size() < lo.size()) num = std::string(lo.size() - num.size(), '0') + num;  // g[01-04]
        out.push_back(prefix + num + suffix);
      }
    }
  }
  return out;
}

std::string format_duration(double seconds, DurationStyle style) {
  if (!(seconds > 0)) seconds = 0;  // NaN too
  if (style == DurationStyle::Tenths && seconds < 59.95) return fmt::format("{:.1f}s", seconds);
  long long s = std::llround(seconds);
  const long long units[] = {86400, 3600, 60, 1};
  const char* names[] = {"d", "h", "m", "s"};
  int first = 3;
  for (int i = 0; i < 3; ++i)
    if (s >= units[i]) {
      first = i;
      break;
    }
  long long big = s / units[first], rest = first < 3 ? s % units[first] / units[first + 1] : 0;
  if (first == 3) return fmt::format("{}s", big);
  if (style == DurationStyle::Compact)
    return rest ? fmt::format("{}{}{}{}", big, names[first], rest, names[first + 1]) : fmt::format("{}{}", big, names[first]);
  return fmt::format("{}{}{:02}{}", big, names[first], rest, names[first + 1]);
}

std::string format_bytes(long long bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < (1LL << 20)) return fmt::format("{:.1f} KiB", b / 1024);
  if (bytes < (10LL << 20)) return fmt::format("{:.1f} MiB", b / (1 << 20));
  if (bytes < (1LL << 30)) return fmt::format("{:.0f} MiB", b / (1 << 20));
  return fmt::format("{:.1f} GiB", b / (1LL << 30));
}

std::optional<long long> meminfo_kib(std::string_view meminfo, std::string_view key) {
  for (size_t at = 0; at < meminfo.size();) {
    size_t end = meminfo.find('\n', at);
    std::string_view line = meminfo.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    if (line.size() > key.size() && line.compare(0, key.size(), key) == 0 && line[key.size()] == ':') {
      long long v = 0;
      bool digits = false;
      for (char c : line.substr(key.size() + 1)) {
        if (c >= '0' && c <= '9') {
          if (v > (1LL << 50)) return std::nullopt;
          v = v * 10 + (c - '0');
          digits = true;
        } else if (digits || (c != ' ' && c != '\t')) {
          break;
        }
      }
      return digits ? std::optional<long long>(v) : std::nullopt;
    }
    if (end == std::string_view::npos) break;
    at = end + 1;
  }
  return std::nullopt;
}

bool contains(std::string_view hay, std::string_view needle) { return hay.find(needle) != std::string_view::npos; }

bool contains(const std::vector<std::string>& items, std::string_view item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string file_name_of(std::string_view path) {
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

}  // namespace ddpctl
