#pragma once
// Regular expressions over text ddpctl did not write: a job's logs, a spec's
// progress pattern. RE2 underneath: matching is linear in the text and uses no
// recursion, so one long log line or a pathological pattern cannot crash or
// stall status, report or the job's watchdog (libstdc++'s std::regex recursed
// once per character and backtracked exponentially).
//
// The syntax is RE2's (Perl-like, without backreferences or lookaround),
// bytes as characters (Latin-1): logs are not always valid UTF-8.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace re2 {
class RE2;
}

namespace ddpctl {

// The groups of one match: [0] is the whole match; nullopt where a group
// took no part in it. The views point into the text searched.
struct RegexMatch {
  std::vector<std::optional<std::string_view>> groups;
  bool matched(size_t i) const { return i < groups.size() && groups[i].has_value(); }
  std::string str(size_t i) const { return matched(i) ? std::string(*groups[i]) : std::string(); }
};

class Regex {
 public:
  // ddpctl's own patterns: a pattern that does not compile is a bug (std::logic_error).
  explicit Regex(std::string_view pattern);
  // A pattern from outside (a spec): nullopt and the engine's own words in `problem`.
  static std::optional<Regex> compile(std::string_view pattern, std::string* problem);

  // Somewhere in `text` / all of `text`.
  bool search(std::string_view text, RegexMatch* m = nullptr) const;
  bool full_match(std::string_view text, RegexMatch* m = nullptr) const;
  // `text` with the first match (or every match) replaced by `with`, taken literally.
  std::string replace_first(const std::string& text, std::string_view with) const;
  std::string replace_all(const std::string& text, std::string_view with) const;

  // Whether the pattern can match an empty text somewhere (what an empty
  // match may assert depends only on the characters beside it: every case is
  // tried).
  bool can_match_empty() const;

  int group_count() const;
  // Named groups ((?P<name>...)) and their numbers.
  std::vector<std::pair<std::string, int>> named_groups() const;

 private:
  Regex() = default;
  bool find(std::string_view text, bool anchored_both, RegexMatch* m) const;
  std::shared_ptr<const re2::RE2> re_;
};

// `pattern` with `(?<name>...)`, as PCRE, Python and the docs write a named
// group, as RE2's `(?P<name>...)` (Debian 12's RE2 knows only the latter);
// escapes, classes and \Q...\E quotes are left alone. `names`, when given,
// gets every group name in the order written.
std::string with_p_names(std::string_view pattern, std::vector<std::string>* names = nullptr);

// A pattern whose match from the start of a text holds, in its groups, the
// LAST of `pattern`'s matches found left to right (each search going on
// after the match before, as replace_all goes): the captures of a repeated
// group are its last repetition's. So one pass over the text finds it, where
// a search after each match scans the rest of the text again for every
// match (`(?:.*z)?` over a line of 250,000 characters: hours). The groups
// keep their numbers and names. Exact for a pattern that cannot match an
// empty text (can_match_empty); after an empty match it stops there.
std::string last_match_pattern(std::string_view pattern);

}  // namespace ddpctl
