#pragma once
// Parsers for the value formats a run spec uses. Each returns nullopt and sets
// `problem` to a sentence fragment ("must be ...") when the text is not valid.
#include <optional>
#include <string>
#include <string_view>

namespace ddpctl {

// Strict decimal integer (no sign unless allow_negative, no 0x, no exponent).
std::optional<long long> parse_int(std::string_view s, long long min, long long max, std::string* problem);

// YAML-style booleans: true/false, yes/no, on/off (any case).
std::optional<bool> parse_bool(std::string_view s, std::string* problem);

// A finite decimal number such as 0.1, 1e-4 or 5; kept as text by callers so
// that the trainer receives exactly what the user wrote.
bool is_decimal_number(std::string_view s);

// Slurm's time formats: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S. Returns seconds.
// "infinite"/"UNLIMITED" are refused: a training job needs a real limit.
std::optional<long long> parse_slurm_time(std::string_view s, std::string* problem);
// A span of time as a spec writes it: "30s", "10m", "2h", or seconds ("45"),
// at most kMaxSpanSeconds whatever the unit. The job's agent reads the
// spans the script hands it (--stall-after 10000800s) with the same parser,
// so what gen accepts the job accepts.
constexpr long long kMaxSpanSeconds = 10'000'000;  // 115 days
std::optional<long long> parse_span(std::string_view s, std::string* problem);

// Seconds as Slurm's D-HH:MM:SS (days only when non-zero).
std::string format_slurm_time(long long seconds);

// Memory with an optional K/M/G/T unit (Slurm's default unit is M), optionally
// followed by B or iB (both read as binary units, as Slurm does). Returns MiB.
std::optional<long long> parse_memory_mib(std::string_view s, std::string* problem);
// MiB in the largest exact unit Slurm accepts: 65536 -> "64G", 1536 -> "1536M".
std::string format_memory(long long mib);

// Names Slurm accepts for accounts, partitions, QOS, GRES types and features.
bool is_slurm_name(std::string_view s);
// The problem with a would-be Slurm name, or nullopt if it is one.
std::optional<std::string> slurm_name_problem(const std::string& s);
// Run and job names: letters, digits, '.', '_', '-', starting with a letter or digit.
bool is_run_name(std::string_view s);
// Network interface names as Linux allows them (at most 15 characters).
bool is_interface_name(std::string_view s);
// Slurm feature expressions for --constraint: names joined by & or |, with
// [ ] ( ) and *N counts.
bool is_feature_expression(std::string_view s);
// Environment variable names.
bool is_env_name(std::string_view s);

}  // namespace ddpctl
