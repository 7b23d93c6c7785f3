#include "base/values.hpp"

#include "base/text.hpp"

#include <charconv>
#include <cctype>
#include <cstdint>
#include <fmt/format.h>

namespace ddpctl {

namespace {

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

std::optional<long long> to_ll(std::string_view s) {
  if (!all_digits(s) || s.size() > 18) return std::nullopt;
  long long v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}


bool name_chars(std::string_view s, std::string_view extra) {
  for (char c : s) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || extra.find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::optional<long long> parse_int(std::string_view s, long long min, long long max, std::string* problem) {
  bool negative = !s.empty() && s[0] == '-';
  std::string_view digits = negative ? s.substr(1) : s;
  auto v = to_ll(digits);
  if (!v) {
    *problem = all_digits(digits) ? fmt::format("must be an integer from {} to {}", min, max)
                                  : "must be a whole number";
    return std::nullopt;
  }
  long long value = negative ? -*v : *v;
  if (value < min || value > max) {
    *problem = fmt::format("must be an integer from {} to {}", min, max);
    return std::nullopt;
  }
  return value;
}

std::optional<bool> parse_bool(std::string_view s, std::string* problem) {
  std::string l = lower(s);
  if (l == "true" || l == "yes" || l == "on") return true;
  if (l == "false" || l == "no" || l == "off") return false;
  *problem = "must be true or false";
  return std::nullopt;
}

bool is_decimal_number(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  size_t int_digits = 0, frac_digits = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++int_digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++frac_digits;
  }
  if (int_digits + frac_digits == 0 || int_digits + frac_digits > 30) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    size_t exp_digits = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++exp_digits;
    if (exp_digits == 0 || exp_digits > 3) return false;
  }
  return i == s.size();
}

std::optional<long long> parse_slurm_time(std::string_view s, std::string* problem) {
  static const char* kForms =
      "must be a Slurm time limit: MINUTES, MINUTES:SECONDS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS";
  std::string l = lower(s);
  if (l == "infinite" || l == "unlimited") {
    *problem = "must be a finite time limit (schedulers start jobs with a limit sooner, and requeue needs one)";
    return std::nullopt;
  }
  long long days = 0;
  std::string_view rest = s;
  bool has_days = false;
  if (auto dash = s.find('-'); dash != std::string_view::npos) {
    auto d = to_ll(s.substr(0, dash));
    if (!d) return *problem = kForms, std::nullopt;
    days = *d, has_days = true;
    rest = s.substr(dash + 1);
  }
  long long parts[3];
  size_t n = 0;
  for (size_t start = 0;;) {
    size_t colon = rest.find(':', start);
    std::string_view piece = rest.substr(start, colon == std::string_view::npos ? colon : colon - start);
    auto v = to_ll(piece);
    if (!v || n == 3) return *problem = kForms, std::nullopt;
    parts[n++] = *v;
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  long long seconds;
  if (has_days) {
    // D-H, D-H:M, D-H:M:S
    long long h = parts[0], m = n > 1 ? parts[1] : 0, sec = n > 2 ? parts[2] : 0;
    if (h > 23 || m > 59 || sec > 59) return *problem = "hours must be below 24, minutes and seconds below 60 in D-HH:MM:SS", std::nullopt;
    seconds = ((days * 24 + h) * 60 + m) * 60 + sec;
  } else if (n == 1) {
    seconds = parts[0] * 60;  // minutes
  } else if (n == 2) {
    if (parts[1] > 59) return *problem = "seconds must be below 60 in MINUTES:SECONDS", std::nullopt;
    seconds = parts[0] * 60 + parts[1];
  } else {
    if (parts[1] > 59 || parts[2] > 59) return *problem = "minutes and seconds must be below 60 in HH:MM:SS", std::nullopt;
    seconds = (parts[0] * 60 + parts[1]) * 60 + parts[2];
  }
  if (seconds <= 0) return *problem = "must be longer than zero", std::nullopt;
  if (seconds > 365LL * 24 * 3600) return *problem = "must be at most 365 days", std::nullopt;
  return seconds;
}

std::string format_slurm_time(long long seconds) {
  long long d = seconds / 86400, h = seconds / 3600 % 24, m = seconds / 60 % 60, s = seconds % 60;
  if (d > 0) return fmt::format("{}-{:02}:{:02}:{:02}", d, h, m, s);
  return fmt::format("{:02}:{:02}:{:02}", h, m, s);
}

std::optional<long long> parse_memory_mib(std::string_view s, std::string* problem) {
  static const char* kForm = "must be a memory size such as 64G, 500G, 2048M or 1T (Slurm's default unit is M)";
  size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  auto number = to_ll(s.substr(0, i));
  if (!number) return *problem = kForm, std::nullopt;
  std::string unit = lower(s.substr(i));
  static const struct { const char* suffix; long long kib; } kUnits[] = {
      {"", 1024}, {"k", 1}, {"m", 1024}, {"g", 1024LL * 1024}, {"t", 1024LL * 1024 * 1024}};
  for (const auto& u : kUnits) {
    std::string base = u.suffix;
    if (unit == base || (!base.empty() && (unit == base + "b" || unit == base + "ib"))) {
      if (*number > (INT64_MAX / 2) / u.kib) return *problem = "is too large", std::nullopt;
      long long kib = *number * u.kib;
      if (kib % 1024 != 0) return *problem = "must be a whole number of MiB", std::nullopt;
      if (kib / 1024 > 1024LL * 1024 * 1024) return *problem = "is larger than 1 PiB", std::nullopt;
      return kib / 1024;
    }
  }
  *problem = kForm;
  return std::nullopt;
}

std::string format_memory(long long mib) {
  if (mib > 0 && mib % (1024LL * 1024) == 0) return fmt::format("{}T", mib / (1024LL * 1024));
  if (mib > 0 && mib % 1024 == 0) return fmt::format("{}G", mib / 1024);
  return fmt::format("{}M", mib);
}

bool is_slurm_name(std::string_view s) {
  return !s.empty() && s.size() <= 64 && std::isalnum(static_cast<unsigned char>(s[0])) && name_chars(s, "._-");
}

std::optional<std::string> slurm_name_problem(const std::string& s) {
  if (is_slurm_name(s)) return std::nullopt;
  return "must be a Slurm name: letters, digits, '.', '_' and '-', starting with a letter or digit, at most 64 "
         "characters";
}

bool is_run_name(std::string_view s) { return is_slurm_name(s); }

bool is_interface_name(std::string_view s) {
  return !s.empty() && s.size() <= 15 && name_chars(s, "._-:") && s[0] != '-';
}

bool is_feature_expression(std::string_view s) {
  return !s.empty() && s.size() <= 256 && name_chars(s, "._-&|[]()*");
}

bool is_env_name(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_') || static_cast<unsigned char>(c) >= 0x80) return false;
  return true;
}

std::optional<long long> parse_span(std::string_view s, std::string* problem) {
  std::string_view digits = s;
  long long unit = 1;
  if (!s.empty() && (s.back() == 's' || s.back() == 'm' || s.back() == 'h')) {
    unit = s.back() == 's' ? 1 : s.back() == 'm' ? 60 : 3600;
    digits = s.substr(0, s.size() - 1);
  }
  std::string ignored;
  auto v = parse_int(digits, 1, kMaxSpanSeconds, &ignored);
  if (!v) {
    if (problem) *problem = "must be a span of time such as 30s, 10m or 2h";
    return std::nullopt;
  }
  if (*v > kMaxSpanSeconds / unit) {
    if (problem)
      *problem = fmt::format("is longer than {}s ({} days), the longest span ddpctl and its job agent take",
                             kMaxSpanSeconds, kMaxSpanSeconds / 86400);
    return std::nullopt;
  }
  return *v * unit;
}

}  // namespace ddpctl
