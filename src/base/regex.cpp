#include "base/regex.hpp"

#include <re2/re2.h>
#include <stdexcept>

namespace ddpctl {

namespace {

RE2::Options options() {
  RE2::Options o;
  o.set_log_errors(false);                         // the error goes to the caller, not to stderr
  o.set_encoding(RE2::Options::EncodingLatin1);   // a byte is a character, as in std::regex
  return o;
}

// Walks `pattern` as RE2 reads it: what an escape, a class or a \Q...\E
// quote holds is never a group. Rewrites (?<name> as (?P<name>, collects the
// names, and says whether a \Q is still open at the end.
std::string scan_groups(std::string_view pattern, std::vector<std::string>* names, bool* open_quote) {
  std::string out;
  bool in_class = false;
  if (open_quote) *open_quote = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char ch = pattern[i];
    if (ch == '\\' && !in_class && pattern.compare(i, 2, "\\Q") == 0) {
      // Everything up to the first \E is literal, backslashes too (RE2's rule).
      size_t end = pattern.find("\\E", i + 2);
      if (end == std::string_view::npos && open_quote) *open_quote = true;
      size_t stop = end == std::string_view::npos ? pattern.size() : end + 2;
      out.append(pattern.substr(i, stop - i));
      i = stop - 1;
      continue;
    }
    if (ch == '\\') {
      out += ch;
      if (i + 1 < pattern.size()) out += pattern[++i];
      continue;
    }
    if (in_class) {
      in_class = ch != ']';
      out += ch;
      continue;
    }
    if (ch == '[') {
      // A ']' first in a class ([]x], [^]x]) is one of its characters.
      in_class = true;
      out += ch;
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out += pattern[++i];
      continue;
    }
    size_t name_at = pattern.compare(i, 4, "(?P<") == 0 ? i + 4
                     : pattern.compare(i, 3, "(?<") == 0 && pattern.compare(i, 4, "(?<=") != 0 &&
                             pattern.compare(i, 4, "(?<!") != 0
                         ? i + 3
                         : 0;
    size_t end = name_at ? pattern.find('>', name_at) : std::string_view::npos;
    if (end == std::string_view::npos) {  // not a named group (or not closed: the engine says so)
      out += ch;
      continue;
    }
    std::string_view name = pattern.substr(name_at, end - name_at);
    if (names) names->emplace_back(name);
    out += "(?P<";
    out += name;
    out += '>';
    i = end;
  }
  return out;
}

}  // namespace

std::string with_p_names(std::string_view pattern, std::vector<std::string>* names) {
  return scan_groups(pattern, names, nullptr);
}

std::string last_match_pattern(std::string_view pattern) {
  bool open_quote = false;
  scan_groups(pattern, nullptr, &open_quote);
  // Lazily skipped text, then a match, as often as there is one: each
  // repetition's match is the leftmost after the one before, and the
  // captures are the last repetition's. A \Q left open would quote the ")".
  return "^(?:(?s:.)*?(?:" + std::string(pattern) + (open_quote ? "\\E" : "") + "))*";
}

Regex::Regex(std::string_view pattern) {
  std::string problem;
  auto r = compile(pattern, &problem);
  if (!r) throw std::logic_error("ddpctl's own pattern " + std::string(pattern) + " does not compile: " + problem);
  re_ = r->re_;
}

std::optional<Regex> Regex::compile(std::string_view pattern, std::string* problem) {
  auto re = std::make_shared<const re2::RE2>(re2::StringPiece(pattern.data(), pattern.size()), options());
  if (!re->ok()) {
    if (problem) *problem = re->error();
    return std::nullopt;
  }
  Regex out;
  out.re_ = std::move(re);
  return out;
}

bool Regex::find(std::string_view text, bool anchored_both, RegexMatch* m) const {
  int n = m ? re_->NumberOfCapturingGroups() + 1 : 0;
  std::vector<re2::StringPiece> pieces(n);
  bool found = re_->Match(re2::StringPiece(text.data(), text.size()), 0, text.size(),
                          anchored_both ? RE2::ANCHOR_BOTH : RE2::UNANCHORED, pieces.data(), n);
  if (found && m) {
    m->groups.assign(n, std::nullopt);
    for (int i = 0; i < n; ++i)
      if (pieces[i].data() != nullptr) m->groups[i] = std::string_view(pieces[i].data(), pieces[i].size());
  }
  return found;
}

bool Regex::search(std::string_view text, RegexMatch* m) const { return find(text, false, m); }

bool Regex::full_match(std::string_view text, RegexMatch* m) const { return find(text, true, m); }

std::string Regex::replace_first(const std::string& text, std::string_view with) const {
  RegexMatch m;
  if (!search(text, &m)) return text;
  size_t at = m.groups[0]->data() - text.data();
  return text.substr(0, at) + std::string(with) + text.substr(at + m.groups[0]->size());
}

std::string Regex::replace_all(const std::string& text, std::string_view with) const {
  std::string out;
  size_t from = 0;
  re2::StringPiece whole(text.data(), text.size()), piece;
  while (from <= text.size() && re_->Match(whole, from, text.size(), RE2::UNANCHORED, &piece, 1)) {
    size_t at = piece.data() - text.data();
    out.append(text, from, at - from);
    out.append(with);
    from = at + piece.size();
    if (piece.empty()) {  // an empty match: keep the next character and move past it
      if (from < text.size()) out += text[from];
      ++from;
    }
  }
  if (from < text.size()) out.append(text, from, std::string::npos);
  return out;
}

bool Regex::can_match_empty() const {
  // An empty match can only assert ^ $ \A \z \b \B (and their (?m) forms):
  // each looks at the character before and after it, which is none, a word
  // character, a newline or another: every pair of them is below.
  static const char* const kBeside[] = {"", "a", " ", "\n", "aa", "a ", "a\n", " a", "  ", " \n", "\na", "\n ", "\n\n"};
  for (const char* text : kBeside) {
    re2::StringPiece t(text);
    for (size_t at = 0; at <= t.size(); ++at)
      if (re_->Match(t, at, at, RE2::ANCHOR_BOTH, nullptr, 0)) return true;
  }
  return false;
}

int Regex::group_count() const { return re_->NumberOfCapturingGroups(); }

std::vector<std::pair<std::string, int>> Regex::named_groups() const {
  const auto& named = re_->NamedCapturingGroups();
  return {named.begin(), named.end()};
}

}  // namespace ddpctl
