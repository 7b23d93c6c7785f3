#pragma once
// Small text helpers shared by validation and the CLI.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddpctl {

// Byte offset of the first byte that is not part of valid UTF-8 (overlongs,
// surrogates and code points above U+10FFFF count as invalid), if any.
std::optional<size_t> find_invalid_utf8(std::string_view s);

// Byte offset of the first control character: C0 (U+0000-U+001F), DEL, or C1
// (U+0080-U+009F). `allow_tab` lets U+0009 through (shell lines the user wrote).
// Assumes valid UTF-8.
std::optional<size_t> find_control_char(std::string_view s, bool allow_tab = false);

// Why `s` cannot reach a script, or nullopt if it may: invalid UTF-8 or a
// control character (newlines included), described with its byte position.
std::optional<std::string> script_value_problem(std::string_view s, bool allow_tab = false);

// The candidate closest to `word` by edit distance, if it is close enough to be
// a plausible typo.
std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" or "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

std::string join(const std::vector<std::string>& items, std::string_view sep);
// "a,b," split at ',' -> {"a", "b", ""}.
std::vector<std::string> split(const std::string& s, char sep);
// `s` without leading and trailing spaces, tabs and line ends.
std::string trim(const std::string& s);
// The words of `s`, split at runs of spaces and tabs.
std::vector<std::string> split_ws(const std::string& s);

// "'a', 'b' or 'c'"
std::string quoted_list(const std::vector<std::string>& items);

// Shows a value in a message: quoted, with anything unprintable escaped, and
// cut short when long, so hostile input cannot garble the terminal.
std::string printable(std::string_view s, size_t max_len = 60);

// `s` as one line of plain text for messages quoting another program: control
// characters become '?', and it is cut at `max_len` bytes with "...".
std::string plain_line(std::string_view s, size_t max_len = 300);

// Rows as aligned columns, two spaces apart; the last column is not padded
// and trailing blanks are cut.
std::vector<std::string> format_columns(const std::vector<std::vector<std::string>>& rows);

// "g[1-3],a1" -> g1 g2 g3 a1.
std::vector<std::string> expand_hostlist(const std::string& list);

// The one way ddpctl writes a span of time, in its two largest units:
// - Fixed (status, race plans): "2d03h", "1h02m", "5m40s", "12s";
// - Tenths (measured times, report): as Fixed, but "1.5s" under a minute;
// - Compact (limits in words): zero parts left out: "5h", "1h30m", "59m".
enum class DurationStyle { Fixed, Tenths, Compact };
std::string format_duration(double seconds, DurationStyle style = DurationStyle::Fixed);
// The one way ddpctl writes a size: "512 B", "180.2 KiB", "3.0 MiB",
// "683 MiB" (whole MiB from 10 MiB on), "12.1 GiB".
std::string format_bytes(long long bytes);
// A "Key:   123 kB" line of /proc/meminfo, in KiB.
std::optional<long long> meminfo_kib(std::string_view meminfo, std::string_view key);
// Small tests and changes of a string (ASCII case), kept here so that no
// file keeps a copy of its own.
bool contains(std::string_view hay, std::string_view needle);
bool contains(const std::vector<std::string>& items, std::string_view item);
bool ends_with(std::string_view s, std::string_view tail);
std::string lower(std::string_view s);
std::string upper(std::string_view s);
// A path's last part: "/usr/lib/python3/torch/nn.py" -> "nn.py".
std::string file_name_of(std::string_view path);

}  // namespace ddpctl
