#pragma once
// The one place where values become shell words. Everything ddpctl writes into
// a script that it did not take verbatim from the user's `setup`/`command`
// passes through shell_quote.
#include <optional>
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

// How bash reads a byte of a one-line command: outside quotes (also inside
// $( ) and ` `, which start afresh), inside "...", '...', $'...', or inside
// a ${...} expansion.
enum class ShellQuoting { Unquoted, Double, Single, AnsiC, Parameter };
// The quoting of each byte of `line`, read as bash reads it: \ escapes,
// the quotes, and $( ), ` `, ${ } nested in each other and in "...". A
// comment (# at a word's start) counts as unquoted. A value put in a line
// through a variable (shell_variable_at) needs only this much: where the
// reading is wrong, the value may be split into words, never run.
std::vector<ShellQuoting> shell_quoting_of(std::string_view line);
// Whether bash evaluates each byte of `line` as arithmetic, where the value
// of a variable is read as an expression and an array subscript in it runs
// what $( ) it holds (`a[$(touch x)]`): $(( )), $[ ], (( )) and for (( )),
// [[ ]] with -eq, -ne, -lt, -le, -gt or -ge, `let`, an assignment of
// `declare -i` (typeset, local, readonly, export), and an array's subscript
// (`a[...]`, `unset 'a[...]'`, `(...)` of a compound assignment). It reads
// the text, not the quotes: where it errs, it errs towards arithmetic.
std::vector<bool> shell_arithmetic_of(std::string_view line);
// A value that is only a number ("12", "-3", "0.5"): the only kind that may
// stand where bash evaluates arithmetic.
bool plain_number(std::string_view s);

// The text that, at a place quoted `q`, expands to the variable `name`'s
// value as exactly that part of its word (nothing when it is unset):
// "${NAME-}" outside quotes, ${NAME-} inside "...", '"${NAME-}"' inside
// '...'. nullopt inside ${...}, where no form is exact.
std::optional<std::string> shell_variable_at(ShellQuoting q, const std::string& name);

}  // namespace ddpctl
