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

}  // namespace ddpctl
