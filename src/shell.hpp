#pragma once
// The one place where values become shell words. Everything ddpctl writes into
// a script that it did not take verbatim from the user's `setup`/`command`
// passes through shell_quote.
#include <string>
#include <string_view>
#include <vector>

namespace ddpctl {

// Returns `s` unchanged when every character is one that no shell treats
// specially (letters, digits and _ - + . / : = @ % , outside the first
// position for = and %), else wraps it in single quotes, writing each embedded
// single quote as '\''. The empty string becomes ''.
std::string shell_quote(std::string_view s);

// Quotes each word and joins them with spaces.
std::string shell_join(const std::vector<std::string>& words);

// The value of an `export NAME=...`: quoted as shell_quote does, except that
// the variable's own earlier value, written `$NAME` or `${NAME}`, expands
// (env: {PATH: /opt/x/bin:$PATH}). Prepending ("X:$NAME") and appending
// ("$NAME:X") add the separator only when NAME is set, so an unset
// LD_LIBRARY_PATH gains no empty entry (which would mean the current folder);
// elsewhere an unset NAME expands to nothing. Safe under `set -u`.
std::string shell_assignment_value(const std::string& name, const std::string& value);

// Whether `value` refers to the variable `name` itself ($NAME or ${NAME}).
bool refers_to_itself(const std::string& name, const std::string& value);

}  // namespace ddpctl
