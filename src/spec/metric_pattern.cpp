#include "spec/metric_pattern.hpp"

#include <algorithm>
#include <cstdlib>

#include "base/regex.hpp"

namespace ddpctl {

namespace {

// (?<name>...) as PCRE and Python's docs write it, read as RE2's (?P<name>...).
std::optional<Regex> compile_metric(const std::string& pattern, std::string* problem) {
  return Regex::compile(with_p_names(pattern), problem);
}

}  // namespace

std::optional<std::string> metric_pattern_problem(const std::string& pattern) {
  std::string problem;
  auto re = compile_metric(pattern, &problem);
  if (!re) return "does not compile: " + problem;
  if (re->named_groups().empty())
    return "names no metric: write a named group such as (?P<val_loss>[0-9.eE+-]+); its name is the metric's";
  if (re->can_match_empty())
    return "can match an empty text, so it matches between any two characters: write the text around the number "
           "too, or + where it says * (val_loss=(?P<val_loss>[0-9.]+))";
  return std::nullopt;
}

std::vector<std::string> metric_names(const MetricSpec& spec) {
  std::vector<std::string> names;
  for (const auto& p : spec.patterns) {
    std::string problem;
    if (auto re = compile_metric(p, &problem))
      for (const auto& [name, number] : re->named_groups())
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

namespace {

std::optional<double> number_of(std::string_view text) {
  std::string s(text);
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}
}  // namespace

std::map<std::string, double> read_metric_values(const MetricSpec& spec, const std::vector<std::string>& lines) {
  // Each pattern's last match on a line, in one pass over it (regex.hpp): a
  // search after each match would scan the rest of the line again for each.
  // Most lines have none, which the plain pattern says at less cost.
  struct Reading {
    Regex plain, last;
    std::vector<std::pair<std::string, int>> groups;
  };
  std::vector<Reading> readings;
  for (const auto& p : spec.patterns) {
    std::string problem;
    auto plain = compile_metric(p, &problem);
    auto last = plain ? Regex::compile(last_match_pattern(with_p_names(p)), &problem) : std::nullopt;
    if (last) readings.push_back({*plain, *last, last->named_groups()});
  }
  std::map<std::string, double> out;
  RegexMatch m;
  for (const auto& line : lines)
    for (const Reading& r : readings) {
      if (!r.plain.search(line) || !r.last.search(line, &m)) continue;
      for (const auto& [name, i] : r.groups)
        if (m.matched(static_cast<size_t>(i)))
          if (auto v = number_of(*m.groups[static_cast<size_t>(i)])) out[name] = *v;
    }
  return out;
}

}  // namespace ddpctl
