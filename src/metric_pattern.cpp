#include "metric_pattern.hpp"

#include <algorithm>
#include <cstdlib>

#include "regex.hpp"

namespace ddpctl {

namespace {

// (?<name>...) as PCRE and Python's docs write it, read as RE2's (?P<name>...)
// (Debian 12's RE2 knows only the latter); escapes and classes left alone.
std::string with_p_names(const std::string& pattern) {
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char ch = pattern[i];
    if (ch == '\\') {
      out += ch;
      if (i + 1 < pattern.size()) out += pattern[++i];
      continue;
    }
    if (in_class) {
      in_class = ch != ']';
    } else if (ch == '[') {
      in_class = true;
      out += ch;
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out += pattern[++i];
      continue;
    } else if (pattern.compare(i, 3, "(?<") == 0 && pattern.compare(i, 4, "(?<=") != 0 &&
               pattern.compare(i, 4, "(?<!") != 0) {
      out += "(?P<";
      i += 2;
      continue;
    }
    out += ch;
  }
  return out;
}

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
  std::vector<Regex> patterns;
  for (const auto& p : spec.patterns) {
    std::string problem;
    if (auto re = compile_metric(p, &problem)) patterns.push_back(std::move(*re));
  }
  std::map<std::string, double> out;
  for (const auto& line : lines)
    for (const Regex& re : patterns) {
      auto groups = re.named_groups();
      // Every match on the line, left to right: the last one wins.
      std::string_view rest = line;
      RegexMatch m;
      while (!rest.empty() && re.search(rest, &m)) {
        for (const auto& [name, i] : groups)
          if (m.matched(static_cast<size_t>(i)))
            if (auto v = number_of(*m.groups[static_cast<size_t>(i)])) out[name] = *v;
        std::string_view whole = *m.groups[0];
        size_t next = static_cast<size_t>(whole.data() - rest.data()) + std::max<size_t>(whole.size(), 1);
        if (next > rest.size()) break;
        rest.remove_prefix(next);
      }
    }
  return out;
}

}  // namespace ddpctl
