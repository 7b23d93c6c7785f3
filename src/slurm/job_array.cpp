#include "slurm/job_array.hpp"

#include <algorithm>

namespace ddpctl {

namespace {

// A task index as Slurm prints it: digits only. Nine at most, so that no
// sum below overflows (Slurm's own indices stay below 4,000,001).
std::optional<long long> index_value(std::string_view s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  long long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

struct Range {
  long long first, last, step;
};

// "5", "0-9", "0-9:2"; a step needs a range, as sbatch says.
std::optional<Range> parse_range(std::string_view item) {
  Range r{0, 0, 1};
  if (auto colon = item.find(':'); colon != std::string_view::npos) {
    auto step = index_value(item.substr(colon + 1));
    if (!step || *step < 1) return std::nullopt;
    r.step = *step;
    item = item.substr(0, colon);
    if (item.find('-') == std::string_view::npos) return std::nullopt;
  }
  auto dash = item.find('-');
  auto first = index_value(item.substr(0, dash));
  if (!first) return std::nullopt;
  r.first = r.last = *first;
  if (dash != std::string_view::npos) {
    auto last = index_value(item.substr(dash + 1));
    if (!last || *last < *first) return std::nullopt;
    r.last = *last;
  }
  return r;
}

int digits(long long v) {
  int n = 1;
  while (v >= 10) v /= 10, ++n;
  return n;
}

}  // namespace

std::optional<ArrayTasks> parse_array_tasks(std::string_view text) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') text = text.substr(1, text.size() - 2);
  ArrayTasks out;
  if (auto pct = text.find('%'); pct != std::string_view::npos) {
    auto k = index_value(text.substr(pct + 1));
    if (!k || *k < 1) return std::nullopt;
    out.max_parallel = static_cast<int>(*k);
    text = text.substr(0, pct);
  }
  if (text.empty()) return std::nullopt;
  std::vector<Range> ranges;
  long long total = 0;
  for (size_t at = 0; at <= text.size();) {
    size_t comma = std::min(text.find(',', at), text.size());
    auto r = parse_range(text.substr(at, comma - at));
    if (!r) return std::nullopt;
    total += (r->last - r->first) / r->step + 1;
    if (total > kMaxArrayIndices) return std::nullopt;
    ranges.push_back(*r);
    at = comma + 1;
  }
  out.indices.reserve(static_cast<size_t>(total));
  for (const auto& r : ranges)
    for (long long i = r.first; i <= r.last; i += r.step) out.indices.push_back(static_cast<int>(i));
  std::sort(out.indices.begin(), out.indices.end());
  out.indices.erase(std::unique(out.indices.begin(), out.indices.end()), out.indices.end());
  return out;
}

std::string format_array(const std::vector<int>& sorted_unique_indices, std::optional<int> max_parallel) {
  std::vector<int> v = sorted_unique_indices;
  if (!std::is_sorted(v.begin(), v.end()) || std::adjacent_find(v.begin(), v.end()) != v.end()) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }
  const size_t n = v.size();
  if (n == 0) return "";
  // A piece is indices v[i..j) in arithmetic progression, written "a",
  // "a,b" (two with a step other than 1), "a-b" or "a-b:s". The shortest
  // text is found from the right: a piece from i ends after one or two
  // indices, at the end of the longest progression from i (run_end), or one
  // before it (its last index may start a better piece). Ending anywhere
  // else never helps: the indices cut off would be one more piece of the
  // same step, or single indices, each longer than the progression that
  // holds them.
  auto step_at = [&](size_t i) { return static_cast<long long>(v[i + 1]) - v[i]; };
  std::vector<size_t> run_end(n);
  for (size_t i = n; i-- > 0;) {
    if (i + 1 >= n) run_end[i] = i + 1;
    else if (i + 2 < n && step_at(i + 1) == step_at(i)) run_end[i] = run_end[i + 1];
    else run_end[i] = i + 2;
  }
  auto piece_len = [&](size_t i, size_t j) -> long long {
    size_t count = j - i;
    if (count == 1) return digits(v[i]);
    long long step = step_at(i);
    if (count == 2 && step != 1) return digits(v[i]) + 1 + digits(v[i + 1]);
    return digits(v[i]) + 1 + digits(v[j - 1]) + (step == 1 ? 0 : 1 + digits(step));
  };
  std::vector<long long> best(n + 1, 0);
  std::vector<size_t> next(n + 1, n);
  for (size_t i = n; i-- > 0;) {
    size_t m = run_end[i];
    best[i] = -1;
    // Longest first: on a tie, fewer pieces.
    for (size_t j : {m, m - 1, i + 2, i + 1}) {
      if (j <= i || j > m) continue;
      long long cost = piece_len(i, j) + (j < n ? 1 : 0) + best[j];
      if (best[i] < 0 || cost < best[i]) best[i] = cost, next[i] = j;
    }
  }
  std::string out;
  for (size_t i = 0; i < n; i = next[i]) {
    size_t j = next[i];
    if (!out.empty()) out += ',';
    out += std::to_string(v[i]);
    if (j - i == 1) continue;
    long long step = step_at(i);
    if (j - i == 2 && step != 1) {
      out += ',' + std::to_string(v[i + 1]);
      continue;
    }
    out += '-' + std::to_string(v[j - 1]);
    if (step != 1) out += ':' + std::to_string(step);
  }
  if (max_parallel && *max_parallel >= 1) out += '%' + std::to_string(*max_parallel);
  return out;
}

}  // namespace ddpctl
