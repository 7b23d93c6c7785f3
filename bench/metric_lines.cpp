// bench/metric_lines.sh's program: a metric: pattern over log lines, read by
// read_metric_values (one pass per line) against the way it read them before
// issue 49, a search after each match (the baseline, kept here as it was),
// both in this one run. Prints one markdown row per case.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "spec/metric_pattern.hpp"
#include "base/regex.hpp"

using namespace ddpctl;

namespace {

// read_metric_values before issue 49: every match, each search from where the last one ended.
std::map<std::string, double> searching_after_each_match(const MetricSpec& spec, const std::vector<std::string>& lines) {
  std::vector<Regex> patterns;
  for (const auto& p : spec.patterns) patterns.emplace_back(with_p_names(p));
  std::map<std::string, double> out;
  for (const auto& line : lines)
    for (const Regex& re : patterns) {
      auto groups = re.named_groups();
      std::string_view rest = line;
      RegexMatch m;
      while (!rest.empty() && re.search(rest, &m)) {
        for (const auto& [name, i] : groups)
          if (m.matched(static_cast<size_t>(i))) out[name] = std::strtod(m.str(static_cast<size_t>(i)).c_str(), nullptr);
        std::string_view whole = *m.groups[0];
        size_t next = static_cast<size_t>(whole.data() - rest.data()) + std::max<size_t>(whole.size(), 1);
        if (next > rest.size()) break;
        rest.remove_prefix(next);
      }
    }
  return out;
}

template <typename F>
double seconds(F&& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void row(const char* what, const MetricSpec& spec, const std::vector<std::string>& lines, bool baseline) {
  size_t bytes = 0;
  for (const auto& l : lines) bytes += l.size() + 1;
  std::map<std::string, double> a, b;
  double one_pass = seconds([&] { a = read_metric_values(spec, lines); });
  double before = baseline ? seconds([&] { b = searching_after_each_match(spec, lines); }) : 0;
  if (baseline && a != b) {
    std::fprintf(stderr, "bench: %s: the two readings differ\n", what);
    std::exit(1);
  }
  if (baseline)
    std::printf("| %s | %.1f KiB | %.3f s | %.3f s | %.1fx |\n", what, bytes / 1024.0, one_pass, before, before / one_pass);
  else
    std::printf("| %s | %.1f KiB | %.3f s | (hours: not run) | |\n", what, bytes / 1024.0, one_pass);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  size_t max_baseline = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 80000;
  std::printf("| case | log | one pass (now) | a search after each match (before) | before / now |\n");
  std::printf("|---|---:|---:|---:|---:|\n");
  // The line: a match at every character, each with an optional tail
  // that would reach to the end of the line.
  MetricSpec tail;
  tail.patterns = {"(?P<v>\\d)(?:.*z)?"};
  for (size_t n : {10000ul, 20000ul, 40000ul, 80000ul, 250000ul, 1ul << 20, 4ul << 20}) {
    std::string line(n, '1');
    line.back() = '7';
    std::string what = "one line of " + std::to_string(n) + " digits, `(?P<v>\\d)(?:.*z)?`";
    row(what.c_str(), tail, {line}, n <= max_baseline);
  }
  // An ordinary log: 4 MiB of 100-character lines, a metric every 50th line.
  MetricSpec usual;
  usual.patterns = {"val_loss=(?P<val_loss>[0-9.eE+-]+)", "acc (?<acc>[0-9.]+)"};
  std::vector<std::string> log;
  for (size_t i = 0, bytes = 0; bytes < (4u << 20); ++i) {
    std::string l = i % 50 == 0 ? "epoch " + std::to_string(i / 50) + " val_loss=0." + std::to_string(1000 + i) + " acc 0.9"
                                : "step " + std::to_string(i) + " loss 0.5123 lr 0.001 throughput 1234.5 img/s";
    l.resize(100, ' ');
    bytes += l.size() + 1;
    log.push_back(l);
  }
  row("4 MiB of 100-character lines, two patterns", usual, log, true);
  // Many matches on each line: 4 MiB of lines with 20 metrics each.
  std::vector<std::string> dense;
  for (size_t bytes = 0; bytes < (4u << 20);) {
    std::string l;
    for (int k = 0; k < 20; ++k) l += "val_loss=0." + std::to_string(100 + k) + " ";
    bytes += l.size() + 1;
    dense.push_back(l);
  }
  row("4 MiB of lines with 20 matches each", usual, dense, true);
  return 0;
}
