#include "regex.hpp"

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

}  // namespace

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

int Regex::group_count() const { return re_->NumberOfCapturingGroups(); }

std::vector<std::pair<std::string, int>> Regex::named_groups() const {
  const auto& named = re_->NamedCapturingGroups();
  return {named.begin(), named.end()};
}

}  // namespace ddpctl
